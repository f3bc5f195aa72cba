/**
 * `/v0/billing/*`: the Billing plan record (account.read), Stripe Checkout and the customer portal
 * (billing.manage: owner or admin). Checkout creates or reuses the account's Stripe customer; a
 * browser redirect back from Checkout grants nothing: only the payments webhook (or the daily
 * reconciliation) changes the plan, from what Stripe's API says.
 */
import { Hono, type Context } from 'hono';
import type Stripe from 'stripe';
import { ApiError } from '../errors.ts';
import { publicUrl } from '../config.ts';
import type { Deps } from '../deps.ts';
import { selectedAccount } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { PAID_PLAN_KEYS, planOf } from '../plans/catalogue.ts';
import { incompatible, planChangeFor } from '../plans/change.ts';
import { accountPlanRow } from '../plans/queries.ts';
import { accountOwner, billingRow, linkCustomer } from './queries.ts';
import { BillingPlan, CheckoutRequest, CheckoutSession, PortalSession } from './schemas.ts';
import {
  billingConfigured,
  isPaidPlan,
  missingForSale,
  PRICE_ENV,
  stripeOf,
  viaStripe,
} from './stripe.ts';
import type { SubscriptionView } from './sync.ts';

const tags = ['Billing'];
const plan = operation({
  operationId: 'getBillingPlan',
  summary:
    "The selected account's plan, where it comes from, its Stripe subscription and the plans it can buy",
  tags,
  accountHeader: true,
  responses: { 200: BillingPlan },
});
const checkout = operation({
  operationId: 'createCheckoutSession',
  summary: 'Start buying a plan with Stripe Checkout (owner or admin)',
  description:
    'Only `starter`, `business`, `business_plus` and `agency` are sold; `free`, `internal`, unknown keys and raw `price_...` ids are 400 `invalid_billing_plan`. Send the person to `url`; the plan changes when Stripe confirms the payment (the payments webhook), never on the redirect back. An account with a live subscription changes plans in the customer portal (409 `conflict`). A lower plan the account does not fit is 409 `downgrade_incompatible`. A console session must send `Origin`. An `Idempotency-Key` header makes a retried request return the same session.',
  tags,
  accountHeader: true,
  responses: { 200: CheckoutSession },
  errors: [
    'invalid_billing_plan',
    'billing_not_configured',
    'downgrade_incompatible',
    'conflict',
    'payment_provider_failed',
    'account_suspended',
    'forbidden',
    'csrf_rejected',
  ],
});
const portal = operation({
  operationId: 'createPortalSession',
  summary: "Open Stripe's customer portal for the account (owner or admin)",
  description:
    'Payment methods, invoices, plan changes and cancellation happen there. 409 `billing_customer_missing` before the account has bought anything.',
  tags,
  accountHeader: true,
  responses: { 200: PortalSession },
  errors: [
    'billing_customer_missing',
    'billing_not_configured',
    'payment_provider_failed',
    'account_suspended',
    'forbidden',
    'csrf_rejected',
  ],
});

/** The Billing plan record of an account. */
export async function billingPlanRecord(deps: Deps, accountId: string): Promise<BillingPlan> {
  const account = await accountPlanRow(deps.db, accountId);
  if (!account) throw new ApiError('not_found', 'Account not found.');
  const billing = await billingRow(deps.db, accountId);
  const { config } = deps;
  return {
    account_id: accountId,
    plan_key: planOf(config.plans, account.plan_key).key,
    entitlement_source: account.entitlement_source,
    billing_access_state: account.billing_access_state,
    grace_ends_at: account.grace_ends_at?.toISOString() ?? null,
    billing_configured: billingConfigured(config),
    stripe_customer: billing ? { id: billing.stripe_customer_id } : null,
    subscription: (billing?.subscription as SubscriptionView | null | undefined) ?? null,
    allowed_upgrade_plans: PAID_PLAN_KEYS.map((k) => ({
      plan_key: k,
      display_name: config.plans[k].display_name,
      price_monthly_usd: config.plans[k].price_monthly_usd,
      stripe_price_id: config.stripe.prices[k] ?? null,
      stripe_price_env: PRICE_ENV[k],
      configured: missingForSale(config, k) === null,
    })),
  };
}

/** The contract: a console session's billing mutation carries `Origin` (the CSRF check already refuses a foreign one). */
function requireOriginFromConsole(c: Context<Env>): void {
  if (c.var.actor.session && !c.req.header('origin'))
    throw new ApiError(
      'csrf_rejected',
      'Billing requests from the console must send an Origin header.',
    );
}

/** The account's Stripe customer, created (with the account id in its metadata) on first use. */
async function customerFor(deps: Deps, stripe: Stripe, accountId: string): Promise<string> {
  const existing = await billingRow(deps.db, accountId);
  if (existing) return existing.stripe_customer_id;
  const owner = await accountOwner(deps.db, accountId);
  const customer = await viaStripe('create the customer', () =>
    stripe.customers.create(
      { name: owner?.name, email: owner?.email, metadata: { account_id: accountId } },
      { idempotencyKey: `customer-${accountId}` },
    ),
  );
  await linkCustomer(deps.db, accountId, customer.id);
  // a concurrent first checkout may have linked first: one customer per account, the first one
  return (await billingRow(deps.db, accountId))!.stripe_customer_id;
}

export function billingRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/plan', plan, async (c) => {
    const account = await selectedAccount(c, 'account.read');
    return plan.reply(c, 200, await billingPlanRecord(c.var.deps, account.id));
  });

  r.post(
    '/checkout-session',
    checkout,
    async (c, next) => {
      c.set('membership', await selectedAccount(c, 'billing.manage')); // authorised before the body is read
      requireOriginFromConsole(c);
      await next();
    },
    jsonBody(CheckoutRequest),
    async (c) => {
      const { deps } = c.var;
      const { config } = deps;
      const accountId = c.var.membership.id;
      const key = bodyOf(c, CheckoutRequest).plan_key;
      if (!isPaidPlan(key)) {
        const hint = key.startsWith('price_')
          ? 'Send a plan key, not a Stripe price id.'
          : `Checkout sells ${PAID_PLAN_KEYS.join(', ')}.`;
        throw new ApiError('invalid_billing_plan', `"${key}" cannot be bought. ${hint}`, {
          plan_key: key,
          allowed: [...PAID_PLAN_KEYS],
        });
      }
      const missing = missingForSale(config, key);
      if (missing)
        throw new ApiError(
          'billing_not_configured',
          `Billing for ${config.plans[key].display_name} is not set up on this platform (${missing} is missing).`,
        );
      const price = config.stripe.prices[key]!;
      const account = (await accountPlanRow(deps.db, accountId))!;
      const billing = await billingRow(deps.db, accountId);
      const sub = billing?.subscription as SubscriptionView | null | undefined;
      if (sub && ['active', 'trialing', 'past_due', 'unpaid'].includes(sub.status)) {
        throw new ApiError(
          'conflict',
          'This account already has a subscription: change or cancel it in the customer portal (POST /v0/billing/portal-session).',
          { subscription_id: sub.id },
        );
      }
      const current = planOf(config.plans, account.plan_key);
      if (config.plans[key].price_monthly_usd < current.price_monthly_usd) {
        const change = await planChangeFor(deps.db, config.plans, accountId, key);
        if (!change.compatible) throw incompatible(config.plans, change, account.plan_key, key);
      }
      const stripe = await stripeOf(config);
      const customer = await customerFor(deps, stripe, accountId);
      const consoleUrl = publicUrl(config, config.hosts.console);
      const idem = c.req.header('idempotency-key')?.slice(0, 200) || c.var.requestId;
      const session = await viaStripe('start checkout', () =>
        stripe.checkout.sessions.create(
          {
            mode: 'subscription',
            customer,
            client_reference_id: accountId,
            line_items: [{ price, quantity: 1 }],
            metadata: { account_id: accountId, plan_key: key },
            subscription_data: { metadata: { account_id: accountId, plan_key: key } },
            success_url: `${consoleUrl}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
            cancel_url: `${consoleUrl}/billing?checkout=cancelled`,
          },
          { idempotencyKey: `checkout-${accountId}-${key}-${idem}` },
        ),
      );
      if (!session.url)
        throw new ApiError(
          'payment_provider_failed',
          'Stripe did not return a checkout URL; try again in a moment.',
        );
      return checkout.reply(c, 200, {
        id: session.id,
        url: session.url,
        expires_at: session.expires_at ? new Date(session.expires_at * 1000).toISOString() : null,
      });
    },
  );

  r.post('/portal-session', portal, async (c) => {
    const account = await selectedAccount(c, 'billing.manage');
    requireOriginFromConsole(c);
    const { config } = c.var.deps;
    const stripe = await stripeOf(config);
    const billing = await billingRow(c.var.deps.db, account.id);
    if (!billing)
      throw new ApiError(
        'billing_customer_missing',
        'This account has no Stripe customer yet: buy a plan first (POST /v0/billing/checkout-session).',
      );
    const session = await viaStripe('open the customer portal', () =>
      stripe.billingPortal.sessions.create({
        customer: billing.stripe_customer_id,
        return_url: `${publicUrl(config, config.hosts.console)}/billing`,
      }),
    );
    return portal.reply(c, 200, { url: session.url });
  });

  return r;
}
