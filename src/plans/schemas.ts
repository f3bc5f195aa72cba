/** The account standing records: Account status, Account limits, Downgrade preview. */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';
import { PLAN_KEYS } from './catalogue.ts';

const Numbers = v.record(v.string(), v.number());
const PlanKeySchema = v.picklist(PLAN_KEYS);

export const UsagePeriod = component(
  'UsagePeriod',
  v.strictObject({ period_start: DateTime, period_end: DateTime }),
);
export const RouteCounts = component(
  'RouteCounts',
  v.strictObject({ slugs: v.number(), custom_domains: v.number() }),
);

/** Something over the target (or current) plan: a limit, a feature, or an alias route. */
export const PlanViolation = component(
  'PlanViolation',
  v.strictObject({
    type: v.picklist(['limit', 'feature', 'route', 'billing']),
    key: v.string(),
    route_id: v.nullable(v.string()),
    app_id: v.nullable(v.string()),
    current: v.number(),
    allowed: v.number(),
    message: v.string(),
  }),
);

export const ActiveFlag = component(
  'ActiveFlag',
  v.strictObject({
    scope: v.picklist(['account', 'app']),
    app_id: v.nullable(v.string()),
    flag: v.picklist(['suspended', 'takedown']),
    reason: v.string(),
    set_at: DateTime,
  }),
);

export const StandingWarning = component(
  'StandingWarning',
  v.strictObject({ code: v.string(), message: v.string() }),
);

/** What both standing records carry: usage, its period, route counts and what is over the plan. */
const usageMembers = {
  usage: Numbers,
  usage_period: UsagePeriod,
  route_counts: RouteCounts,
  compatibility_warnings: v.array(PlanViolation),
};

export const AccountStatus = component(
  'AccountStatus',
  v.strictObject({
    account_id: v.string(),
    plan_key: PlanKeySchema,
    billing_access_state: v.picklist(['active', 'past_due_grace', 'restricted']),
    grace_ends_at: v.nullable(DateTime),
    active_flags: v.array(ActiveFlag),
    suspended: v.boolean(),
    restricted: v.boolean(),
    reasons: v.array(v.string()),
    warnings: v.array(StandingWarning),
    limits: Numbers,
    ...usageMembers,
  }),
);
export type AccountStatus = v.InferOutput<typeof AccountStatus>;

export const AccountLimits = component(
  'AccountLimits',
  v.strictObject({
    account_id: v.string(),
    plan_key: PlanKeySchema,
    features: v.record(v.string(), v.boolean()),
    manifest_limits: Numbers,
    deployment_limits: Numbers,
    runtime_limits: Numbers,
    release_limits: Numbers,
    usage_limits: Numbers,
    ...usageMembers,
  }),
);
export type AccountLimits = v.InferOutput<typeof AccountLimits>;

/** What a plan change does to routes over the new plan's limits. */
export const PlanChangeAction = v.strictObject({
  action: v.picklist(['disable_route']),
  route_id: v.string(),
  reason: v.string(),
});

export const DowngradePreview = component(
  'DowngradePreview',
  v.strictObject({
    account_id: v.string(),
    current_plan_key: PlanKeySchema,
    target_plan_key: PlanKeySchema,
    compatible: v.boolean(),
    violations: v.array(PlanViolation),
    actions: v.array(PlanChangeAction),
  }),
);
export type DowngradePreview = v.InferOutput<typeof DowngradePreview>;

export const DowngradeQuery = v.strictObject({
  plan: v.picklist(PLAN_KEYS, `must be one of ${PLAN_KEYS.join(', ')}`),
});
