import { html } from 'hono/html';
import { PLAN_KEYS, type PlanCatalogue } from '../../plans/catalogue.ts';
import type { ConsolePage } from '../layout.ts';

/** The selected account's plan and Stripe subscription: upgrade through Checkout, manage in the customer portal. */
export const billingPage = (plans: PlanCatalogue): ConsolePage => ({
  id: 'billing',
  path: '/billing',
  title: 'Billing',
  nav: 'Billing',
  signedIn: true,
  body: () => html`<section class="card loading" id="content" aria-busy="true" data-plan-names="${JSON.stringify(Object.fromEntries(PLAN_KEYS.map((k) => [k, plans[k].display_name])))}"><p class="muted">Loading billing…</p></section>
<section class="card" id="plans-card" hidden><h2>Plans</h2><div id="plans"></div><div id="preview-result" aria-live="polite"></div></section>`,
});
