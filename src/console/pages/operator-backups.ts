import { html } from 'hono/html';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** Backups: every run with when, size and result; take one now; how to restore one. */
export const operatorBackupsPage: ConsolePage = {
  id: 'operator-backups',
  path: '/operator/backups',
  title: 'Backups',
  signedIn: true,
  body: () => html`${operatorTabs('Backups')}
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading…</p></section>`,
};
