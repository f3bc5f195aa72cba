/**
 * The account follows what Stripe says, in any order Stripe says it, exactly once. An event is never
 * applied by itself: it names an account, whose subscriptions are read again from the Stripe API,
 * and the account's plan and billing access are recomputed from that truth (docs/decisions/plans-and-billing.md,
 * "Billing state machine"). The provider's event id is recorded in the transaction that applies the
 * result, so a replay (even five at once) has no second effect.
 */
import type Stripe from 'stripe';
import type { Config } from '../config.ts';
import type { Executor } from '../db/database.ts';
import type { BillingAccessState, EntitlementSource } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { planOf, type PlanKey } from '../plans/catalogue.ts';
import { applyPlanChange, DISABLED_BILLING, DISABLED_DOWNGRADE } from '../plans/change.ts';
import { accountPlanRow, setBillingAccess, type AccountPlanRow } from '../plans/queries.ts';
import { addHistory, claimStripeEvent, enableBillingRoutes, saveSnapshot } from './queries.ts';
import { planOfPrice, stripeOf } from './stripe.ts';

/** The subscription as the Billing plan record shows it (docs/decisions/plans-and-billing.md). */
export type SubscriptionView = {
  id: string;
  status: Stripe.Subscription.Status;
  price_id: string | null;
  plan_key: PlanKey | null;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
};

const RANK: Record<string, number> = {
  active: 6,
  trialing: 6,
  past_due: 5,
  unpaid: 4,
  paused: 3,
  incomplete: 2,
  canceled: 1,
  incomplete_expired: 0,
};

/** The subscription that decides the plan: the most alive one; among equals the dearest plan, then the newest. */
export function decidingSubscription(
  config: Config,
  subs: Stripe.Subscription[],
): Stripe.Subscription | undefined {
  const price = (s: Stripe.Subscription) => {
    const plan = planOfPrice(config, s.items.data[0]?.price.id);
    return plan ? config.plans[plan].price_monthly_usd : -1;
  };
  return [...subs].sort(
    (a, b) =>
      (RANK[b.status] ?? 0) - (RANK[a.status] ?? 0) || price(b) - price(a) || b.created - a.created,
  )[0];
}

export function viewOf(config: Config, s: Stripe.Subscription): SubscriptionView {
  const item = s.items.data[0];
  const end = item?.current_period_end ?? null;
  return {
    id: s.id,
    status: s.status,
    price_id: item?.price.id ?? null,
    plan_key: planOfPrice(config, item?.price.id),
    current_period_end: end ? new Date(end * 1000).toISOString() : null,
    cancel_at_period_end: s.cancel_at_period_end,
  };
}

export type Target = {
  planKey: PlanKey;
  source: EntitlementSource;
  state: BillingAccessState;
  graceEndsAt: Date | null;
  /** what routes over the new plan's limits become */
  disabledStatus: string;
  unknownPrice: string | null;
};

/**
 * What the account should be, given the deciding subscription (pure: the state machine).
 * - none, canceled, incomplete_expired, paused: a Stripe-granted plan falls back to Free (routes over its limits
 *   `disabled_downgrade`); a manual or default plan is left alone;
 * - incomplete (checkout not paid yet): nothing changes;
 * - active, trialing: the price's plan, `stripe`, billing `active` (an unknown price keeps the plan and is reported);
 * - past_due: the paid plan stays, `past_due_grace` until `grace_ends_at` (set once, when first seen);
 *   after it, and for `unpaid`: Free, `restricted` (routes over Free's limits `disabled_billing`, turned back on by payment).
 */
export function targetFor(
  config: Config,
  current: AccountPlanRow,
  sub: Stripe.Subscription | undefined,
  now: Date,
): Target {
  const keep: Target = {
    planKey: planOf(config.plans, current.plan_key).key,
    source: current.entitlement_source,
    state: current.billing_access_state,
    graceEndsAt: current.grace_ends_at,
    disabledStatus: DISABLED_DOWNGRADE,
    unknownPrice: null,
  };
  const free = (state: BillingAccessState, disabledStatus: string): Target => ({
    planKey: 'free',
    source: 'default',
    state,
    graceEndsAt: null,
    disabledStatus,
    unknownPrice: null,
  });
  const status = sub?.status;
  if (!sub || status === 'canceled' || status === 'incomplete_expired' || status === 'paused') {
    return current.entitlement_source === 'stripe' || current.billing_access_state !== 'active'
      ? free('active', DISABLED_DOWNGRADE)
      : keep;
  }
  if (status === 'incomplete') return keep;
  const price = sub.items.data[0]?.price.id ?? null;
  const mapped = planOfPrice(config, price);
  const paid: Pick<Target, 'planKey' | 'source' | 'unknownPrice'> = mapped
    ? { planKey: mapped, source: 'stripe', unknownPrice: null }
    : { planKey: keep.planKey, source: keep.source, unknownPrice: price };
  if (status === 'active' || status === 'trialing')
    return { ...paid, state: 'active', graceEndsAt: null, disabledStatus: DISABLED_DOWNGRADE };
  if (status === 'past_due') {
    const graceEndsAt =
      current.billing_access_state === 'past_due_grace' && current.grace_ends_at
        ? current.grace_ends_at
        : new Date(now.getTime() + config.stripe.graceDays * 86_400_000);
    if (graceEndsAt > now)
      return { ...paid, state: 'past_due_grace', graceEndsAt, disabledStatus: DISABLED_BILLING };
  }
  return { ...free('restricted', DISABLED_BILLING), unknownPrice: paid.unknownPrice };
}

export type SyncResult = {
  account_id: string;
  plan_key: string;
  billing_access_state: BillingAccessState;
  changed: boolean;
  duplicate: boolean;
};

/**
 * Reads the customer's subscriptions from Stripe and applies them to the account. With `eventId`,
 * the event is recorded in the same transaction; a recorded one changes nothing (`duplicate`).
 */
export async function syncAccount(
  deps: Deps,
  input: {
    accountId: string;
    customerId: string;
    event?: { id: string; type: string };
    source: string;
    now?: Date;
  },
): Promise<SyncResult> {
  const stripe = await stripeOf(deps.config);
  const subs = await stripe.subscriptions.list({
    customer: input.customerId,
    status: 'all',
    limit: 100,
  });
  const sub = decidingSubscription(deps.config, subs.data);
  const now = input.now ?? new Date();
  const result = await deps.db.transaction().execute(async (trx) => {
    const current = await accountPlanRow(trx, input.accountId, { lock: true });
    if (!current) return undefined;
    if (
      input.event &&
      !(await claimStripeEvent(trx, {
        id: input.event.id,
        type: input.event.type,
        accountId: input.accountId,
      }))
    ) {
      return {
        account_id: current.id,
        plan_key: current.plan_key,
        billing_access_state: current.billing_access_state,
        changed: false,
        duplicate: true,
      };
    }
    const target = targetFor(deps.config, current, sub, now);
    const changed = await apply(trx, deps.config, current, target);
    await saveSnapshot(trx, current.id, sub ? viewOf(deps.config, sub) : null, target.unknownPrice);
    if (changed) {
      await addHistory(trx, {
        account_id: current.id,
        source: input.source,
        stripe_event_id: input.event?.id ?? null,
        from_plan_key: current.plan_key,
        to_plan_key: target.planKey,
        from_state: current.billing_access_state,
        to_state: target.state,
      });
    }
    return {
      account_id: current.id,
      plan_key: target.planKey,
      billing_access_state: target.state,
      changed,
      duplicate: false,
    };
  });
  if (!result)
    return {
      account_id: input.accountId,
      plan_key: 'free',
      billing_access_state: 'active',
      changed: false,
      duplicate: false,
    };
  if (result.changed) deps.signals.accountChanged(input.accountId);
  return result;
}

async function apply(
  trx: Executor,
  config: Config,
  current: AccountPlanRow,
  target: Target,
): Promise<boolean> {
  let changed = false;
  if (target.planKey !== current.plan_key || target.source !== current.entitlement_source) {
    // Stripe's word is not refused: what does not fit shows in the account's compatibility warnings.
    await applyPlanChange(trx, config.plans, {
      accountId: current.id,
      planKey: target.planKey,
      source: target.source,
      refuse: false,
      currentPlanKey: current.plan_key,
      disabledStatus: target.disabledStatus,
    });
    changed = true;
  }
  const graceChanged =
    (target.graceEndsAt?.getTime() ?? null) !== (current.grace_ends_at?.getTime() ?? null);
  if (target.state !== current.billing_access_state || graceChanged) {
    await setBillingAccess(trx, current.id, target.state, target.graceEndsAt);
    changed = true;
  }
  // Payment recovered: routes disabled for non-payment come back (they fit the plan they were created under).
  if (
    target.state === 'active' &&
    target.source === 'stripe' &&
    (await enableBillingRoutes(trx, current.id)) > 0
  )
    changed = true;
  return changed;
}
