import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/** What the live release declares: collections and stores (with what each holds), jobs (each can be run now), webhooks (with the URL to paste into the provider). */
export const appResourcesPage: ConsolePage = {
  id: 'app-resources',
  path: '/apps/:app_id/resources',
  title: 'Resources',
  signedIn: true,
  body: (p) =>
    html`${appTabs(p.app_id!, 'Resources')}<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading resources…</p></section>`,
};
