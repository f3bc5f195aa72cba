import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** The selected account's apps; when there are none, how to publish the first one. */
export const appsPage: ConsolePage = {
  id: 'apps',
  path: '/',
  title: 'Apps',
  nav: 'Apps',
  signedIn: true,
  body: () =>
    html`<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading apps…</p></section>`,
};
