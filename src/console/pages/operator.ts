import { html } from 'hono/html';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** The operator's list of every account on the server: plan, usage, flags; search by name, e-mail or id. */
export const operatorPage: ConsolePage = {
  id: 'operator',
  path: '/operator',
  title: 'Operator',
  nav: 'Operator',
  operator: true,
  signedIn: true,
  body: () => html`${operatorTabs('Accounts')}
<section class="card"><form id="search" class="row" role="search"><div><label for="q">Find an account</label><input id="q" type="search" maxlength="200" placeholder="Name, member e-mail or acct_…"></div><button type="submit" class="secondary">Search</button></form></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading accounts…</p></section>`,
};
