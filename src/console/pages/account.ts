import { html } from 'hono/html';
import type { PlanCatalogue } from '../../plans/catalogue.ts';
import { PLAN_KEYS } from '../../plans/catalogue.ts';
import type { ConsolePage } from '../layout.ts';

/** The selected account's plan, usage against each limit, warnings, flags, and what a plan change would do. */
export function accountPage(plans: PlanCatalogue): ConsolePage {
  const names = Object.fromEntries(PLAN_KEYS.map((k) => [k, plans[k].display_name]));
  return {
    id: 'account',
    path: '/account',
    title: 'Account',
    nav: 'Account',
    signedIn: true,
    body: () => html`<section class="card loading" id="content" aria-busy="true" data-plan-names="${JSON.stringify(names)}"><p class="muted">Loading the account…</p></section>
<section class="card" id="limits-card" hidden></section>
<section class="card"><h2>Change plan: what would happen</h2>
<form id="preview" class="row"><div><label for="plan">Plan</label><select id="plan">${PLAN_KEYS.filter((k) => k !== 'internal').map((k) => html`<option value="${k}">${names[k]}</option>`)}</select></div>
<button type="submit" class="secondary">Preview</button></form><div id="preview-result" aria-live="polite"></div></section>`,
  };
}
