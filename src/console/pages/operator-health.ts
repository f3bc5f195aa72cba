import { html } from 'hono/html';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** The server's health for an operator: nodes, job workers, the queue, blobs and Postgres. */
export const operatorHealthPage: ConsolePage = {
  id: 'operator-health',
  path: '/operator/health',
  title: 'Server health',
  signedIn: true,
  body: () => html`${operatorTabs('Health')}
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading…</p></section>`,
};
