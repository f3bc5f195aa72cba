import { html } from 'hono/html';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** What operators did, newest first, and who did it (console, API or the admin command). */
export const operatorActionsPage: ConsolePage = {
  id: 'operator-actions',
  path: '/operator/actions',
  title: 'Operator actions',
  signedIn: true,
  body: () => html`${operatorTabs('Actions')}
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading…</p></section>`,
};
