/** The billing records: the Billing plan, checkout and portal sessions, the webhook's acknowledgement. */
import * as v from 'valibot';
import { component, DateTime, Url } from '../openapi/components.ts';
import { PLAN_KEYS } from '../plans/catalogue.ts';

const PlanKeySchema = v.picklist(PLAN_KEYS);

export const StripeCustomer = component('StripeCustomer', v.strictObject({ id: v.string() }));
export const Subscription = component(
  'Subscription',
  v.strictObject({
    id: v.string(),
    status: v.string(),
    price_id: v.nullable(v.string()),
    plan_key: v.nullable(PlanKeySchema),
    current_period_end: v.nullable(DateTime),
    cancel_at_period_end: v.boolean(),
  }),
);

export const BillingPlan = component(
  'BillingPlan',
  v.strictObject({
    account_id: v.string(),
    plan_key: PlanKeySchema,
    entitlement_source: v.picklist(['default', 'manual', 'stripe']),
    billing_access_state: v.picklist(['active', 'past_due_grace', 'restricted']),
    grace_ends_at: v.nullable(DateTime),
    billing_configured: v.boolean(),
    stripe_customer: v.nullable(StripeCustomer),
    subscription: v.nullable(Subscription),
    allowed_upgrade_plans: v.array(
      v.strictObject({
        plan_key: PlanKeySchema,
        display_name: v.string(),
        price_monthly_usd: v.number(),
        stripe_price_id: v.nullable(v.string()),
        stripe_price_env: v.string(),
        configured: v.boolean(),
      }),
    ),
  }),
);
export type BillingPlan = v.InferOutput<typeof BillingPlan>;

/** Any string, so the route can answer `invalid_billing_plan` (not a generic 400) for a wrong key or a raw price id. */
export const CheckoutRequest = component(
  'CheckoutRequest',
  v.strictObject({ plan_key: v.pipe(v.string(), v.maxLength(100)) }),
);
export const CheckoutSession = component(
  'CheckoutSession',
  v.strictObject({ id: v.string(), url: Url, expires_at: v.nullable(DateTime) }),
);
export const PortalSession = component('PortalSession', v.strictObject({ url: Url }));
export const WebhookAck = component(
  'PaymentsWebhookAck',
  v.strictObject({
    received: v.literal(true),
    event_id: v.string(),
    type: v.string(),
    handled: v.boolean(),
    duplicate: v.boolean(),
  }),
);
