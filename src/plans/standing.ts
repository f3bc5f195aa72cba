/**
 * An account's standing: its plan, billing access, operator flags, usage against each limit, and
 * what keeps it from growing. The status and limits records are both views of it.
 */
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { monthOf, REQUESTS_METRIC } from '../usage/meter.ts';
import {
  cheapestWith,
  LIMIT_GROUPS,
  planOf,
  type FeatureKey,
  type LimitKey,
  type Plan,
} from './catalogue.ts';
import { planChangeFor, type Violation } from './change.ts';
import {
  accountPlanRow,
  accountUsage,
  countLiveApps,
  heldRoutes,
  flagsOf,
  unknownStripePrice,
  type AccountPlanRow,
} from './queries.ts';
import type { AccountLimits, AccountStatus } from './schemas.ts';
import { formatBytes } from '../lib/bytes.ts';
import { measureStorage, STORAGE_METRIC } from '../storage/measure.ts';
import { storageQuota } from '../storage/quota.ts';

/** Usage metrics and the plan limit each is measured against. */
export const METRICS = {
  apps: 'apps.max',
  [REQUESTS_METRIC]: 'requests.monthly.max',
  app_slugs: 'app_slugs.max',
  custom_domains: 'custom_domains.max',
  [STORAGE_METRIC]: 'storage.bytes.max',
} as const satisfies Record<string, LimitKey>;

const WARN_AT = 0.8;

export type Standing = {
  account: AccountPlanRow;
  plan: Plan;
  usage: Record<string, number>;
  limits: Record<string, number>;
  period: { period_start: string; period_end: string };
  routeCounts: { slugs: number; custom_domains: number };
  compatibility: Violation[];
  flags: Awaited<ReturnType<typeof flagsOf>>;
};

/** Reads everything the status and limits records show. `pendingRequests`: this node's not yet flushed count. */
export async function readStanding(
  deps: Deps,
  accountId: string,
  pendingRequests = 0,
  now = new Date(),
): Promise<Standing> {
  const account = await accountPlanRow(deps.db, accountId);
  if (!account) throw new ApiError('not_found', 'Account not found.');
  const plan = planOf(deps.config.plans, account.plan_key);
  const month = monthOf(now);
  const measuring = measureStorage(deps.db, accountId);
  const [apps, monthly, routes, compatibility, flags, unknownPrice, stored] = await Promise.all([
    countLiveApps(deps.db, accountId),
    accountUsage(deps.db, accountId, month.start),
    heldRoutes(deps.db, accountId),
    planChangeFor(deps.db, deps.config.plans, accountId, plan.key, measuring),
    flagsOf(deps.db, accountId),
    unknownStripePrice(deps.db, accountId),
    measuring,
  ]);
  storageQuota(deps).remember(accountId, stored);
  if (unknownPrice) {
    compatibility.violations.push({
      type: 'billing',
      key: 'stripe_price',
      route_id: null,
      app_id: null,
      current: 0,
      allowed: 0,
      message: `The Stripe subscription's price ${unknownPrice} is not mapped to any plan (STRIPE_PRICE_*); the account keeps ${plan.display_name} until it is.`,
    });
  }
  const routeCounts = {
    slugs: routes.filter((r) => r.route_type === 'slug').length,
    custom_domains: routes.filter((r) => r.route_type === 'custom_domain').length,
  };
  const usage = {
    apps,
    [REQUESTS_METRIC]: (monthly[REQUESTS_METRIC] ?? 0) + pendingRequests,
    app_slugs: routeCounts.slugs,
    custom_domains: routeCounts.custom_domains,
    [STORAGE_METRIC]: stored.bytes,
  };
  const limits = Object.fromEntries(
    Object.entries(METRICS).map(([metric, key]) => [metric, limitOf(plan, key)]),
  );
  return {
    account,
    plan,
    usage,
    limits,
    period: {
      period_start: `${month.start}T00:00:00.000Z`,
      period_end: `${month.end}T00:00:00.000Z`,
    },
    routeCounts,
    compatibility: compatibility.violations,
    flags,
  };
}

/** A limit as it applies: a route count whose feature the plan lacks allows none. */
function limitOf(plan: Plan, key: LimitKey): number {
  const feature: FeatureKey | undefined =
    key === 'app_slugs.max'
      ? 'app_slugs'
      : key === 'custom_domains.max'
        ? 'custom_domains'
        : undefined;
  return feature && !plan.features[feature] ? 0 : plan.limits[key];
}

const fmt = (n: number) => n.toLocaleString('en-US');
const day = (d: Date) => d.toISOString().slice(0, 10);

export function statusRecord(deps: Deps, s: Standing): AccountStatus {
  const { account, plan } = s;
  const reasons: string[] = [];
  const warnings: AccountStatus['warnings'] = [];
  const activeFlags: AccountStatus['active_flags'] = [
    ...s.flags.account.map((f) => ({
      scope: 'account' as const,
      app_id: null,
      flag: f.flag,
      reason: f.reason,
      set_at: f.created_at.toISOString(),
    })),
    ...s.flags.apps.map((f) => ({
      scope: 'app' as const,
      app_id: f.app_id,
      flag: f.flag,
      reason: f.reason,
      set_at: f.created_at.toISOString(),
    })),
  ];
  for (const f of activeFlags) {
    const what =
      f.scope === 'account'
        ? 'The account is suspended'
        : f.flag === 'takedown'
          ? `App ${f.app_id} is taken down`
          : `App ${f.app_id} is suspended`;
    reasons.push(`${what}: ${f.reason}`);
  }
  const suspended = s.flags.account.some((f) => f.flag === 'suspended');

  let restricted = false;
  if (account.billing_access_state !== 'active') {
    restricted = true;
    const until = account.grace_ends_at ? ` until ${day(account.grace_ends_at)}` : '';
    const message =
      account.billing_access_state === 'past_due_grace'
        ? `A payment failed. Apps stay online${until}, but new slugs, custom domains and other paid features are blocked until the payment goes through.`
        : 'Payment is overdue past its grace period: paid features are blocked until the payment goes through.';
    reasons.push(message);
    warnings.push({ code: 'billing_past_due', message });
  }
  const upgrade = (test: (p: Plan) => boolean) => {
    const k = cheapestWith(deps.config.plans, test);
    return k && k !== plan.key && deps.config.plans[k].price_monthly_usd > plan.price_monthly_usd
      ? ` ${deps.config.plans[k].display_name} allows more.`
      : '';
  };
  for (const [metric, key] of Object.entries(METRICS)) {
    const limit = s.limits[metric]!;
    const used = s.usage[metric]!;
    if (limit <= 0 || used < limit * WARN_AT) continue;
    const bytes = metric === STORAGE_METRIC;
    const label =
      metric === REQUESTS_METRIC
        ? 'monthly requests'
        : bytes
          ? 'of app data and files'
          : metric.replace('_', ' ');
    const amount = bytes ? formatBytes : fmt;
    const more = upgrade((p) => p.limits[key as LimitKey] > limit);
    if (used >= limit) {
      const blocking =
        metric === REQUESTS_METRIC
          ? ' App origins answer 402 until the month ends.'
          : bytes
            ? ' New rows and files are refused until some are deleted.'
            : ' New ones are refused.';
      warnings.push({
        code: 'limit_reached',
        message: `${plan.display_name} allows ${amount(limit)} ${label}; this account is at ${amount(used)}.${blocking}${more}`,
      });
      if (metric === REQUESTS_METRIC) {
        restricted = true;
        reasons.push(
          `The monthly request quota (${fmt(limit)}) is used up until ${s.period.period_end.slice(0, 10)}.`,
        );
      }
    } else {
      warnings.push({
        code: 'usage_near_limit',
        message: `${amount(used)} of ${amount(limit)} ${label} used (${Math.floor((used / limit) * 100)}%).${more}`,
      });
    }
  }
  if (s.compatibility.length) {
    restricted = true;
    reasons.push(
      `The account is over its ${plan.display_name} plan (see compatibility_warnings); new apps and routes are refused until it fits.`,
    );
    warnings.push({
      code: 'plan_incompatible',
      message: `This account does not fit ${plan.display_name}: ${s.compatibility.map((v) => v.message).join(' ')}`,
    });
  }
  return {
    account_id: account.id,
    plan_key: plan.key,
    billing_access_state: account.billing_access_state,
    grace_ends_at: account.grace_ends_at?.toISOString() ?? null,
    active_flags: activeFlags,
    suspended,
    restricted,
    reasons,
    warnings,
    usage: s.usage,
    limits: s.limits,
    usage_period: s.period,
    route_counts: s.routeCounts,
    compatibility_warnings: s.compatibility,
  };
}

export function limitsRecord(s: Standing): AccountLimits {
  const group = (keys: readonly LimitKey[]) =>
    Object.fromEntries(keys.map((k) => [k, s.plan.limits[k]]));
  return {
    account_id: s.account.id,
    plan_key: s.plan.key,
    features: { ...s.plan.features },
    manifest_limits: group(LIMIT_GROUPS.manifest_limits),
    deployment_limits: group(LIMIT_GROUPS.deployment_limits),
    runtime_limits: group(LIMIT_GROUPS.runtime_limits),
    release_limits: group(LIMIT_GROUPS.release_limits),
    usage_limits: group(LIMIT_GROUPS.usage_limits),
    usage: s.usage,
    usage_period: s.period,
    route_counts: s.routeCounts,
    compatibility_warnings: s.compatibility,
  };
}
