import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * An app's releases, why each is or is not live and what to do about it, and rollback; for owners
 * and admins, unpublishing the app and erasing an unpublished app's data.
 */
export const appReleasesPage: ConsolePage = {
  id: 'app-releases',
  path: '/apps/:app_id',
  title: 'App',
  signedIn: true,
  body: (p) =>
    html`${appTabs(p.app_id!, 'Releases')}<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading releases…</p></section>
<section class="card" id="danger" hidden></section>`,
};
