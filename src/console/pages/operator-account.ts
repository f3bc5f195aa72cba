import { html } from 'hono/html';
import { PLAN_KEYS } from '../../plans/catalogue.ts';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** One account, for an operator: its plan, billing access, suspension, and its apps' flags. */
export const operatorAccountPage: ConsolePage = {
  id: 'operator-account',
  path: '/operator/accounts/:account_id',
  title: 'Account',
  signedIn: true,
  body: () => html`${operatorTabs('Accounts')}
<section class="card loading" id="summary" aria-busy="true"><p class="muted">Loading the account…</p></section>
<section class="card"><h2>Plan</h2>
<form id="plan-form" class="row"><div><label for="plan">Plan</label><select id="plan">${PLAN_KEYS.map((k) => html`<option value="${k}">${k}</option>`)}</select></div>
<label class="check"><input type="checkbox" id="force"> Force a downgrade</label>
<button type="submit">Set plan</button></form><p class="muted">A downgrade the account does not fit is refused unless forced; forced, the routes over the new limits are disabled and nothing is deleted.</p></section>
<section class="card"><h2>Suspension</h2><div id="suspension"></div></section>
<section class="card"><h2>Billing access</h2>
<form id="billing-form" class="row"><div><label for="state">Billing access</label><select id="state"><option value="active">active</option><option value="past_due_grace">past_due_grace</option><option value="restricted">restricted</option></select></div>
<div><label for="grace">Grace days <span class="optional">(for past_due_grace)</span></label><input id="grace" type="number" min="1" max="90" value="7"></div>
<button type="submit" class="secondary">Set billing access</button></form></section>
<section class="card loading" id="apps" aria-busy="true"><p class="muted">Loading apps…</p></section>`,
};
