/**
 * The plan catalogue: every plan's name, price, features and limits, in one table. An operator can
 * replace numbers, prices, names and features with `PLATFORM_PLANS_FILE` (merged over this table,
 * checked at start-up). docs/decisions/plans-and-billing.md carries the same table with the reasoning behind it.
 */
import { RELEASE_LIMITS } from '../manifest/limits.ts';
import * as v from 'valibot';

export const PLAN_KEYS = [
  'free',
  'starter',
  'business',
  'business_plus',
  'agency',
  'internal',
] as const;
export type PlanKey = (typeof PLAN_KEYS)[number];
/** The plans Stripe Checkout sells (the contract's list). */
export const PAID_PLAN_KEYS = [
  'starter',
  'business',
  'business_plus',
  'agency',
] as const satisfies readonly PlanKey[];

export const FEATURE_KEYS = ['app_slugs', 'custom_domains', 'app_analytics', 'webhooks'] as const;
export type FeatureKey = (typeof FEATURE_KEYS)[number];

/** Limit keys, grouped as the Account limits record groups them. */
export const LIMIT_GROUPS = {
  manifest_limits: ['data.collections.max'],
  deployment_limits: ['apps.max', 'app_slugs.max', 'custom_domains.max'],
  runtime_limits: [
    'server.cpu_ms.max',
    'jobs.waiting.max',
    'queues.waiting.max',
    'bindings.operations.max',
  ],
  release_limits: ['release.file_count.max'],
  usage_limits: [
    'requests.monthly.max',
    'storage.bytes.max',
    'events.retention_days',
    'analytics.retention_days',
  ],
} as const;
export type LimitGroup = keyof typeof LIMIT_GROUPS;
export type LimitKey = (typeof LIMIT_GROUPS)[LimitGroup][number];
export const LIMIT_KEYS = Object.values(LIMIT_GROUPS).flat() as LimitKey[];

export type Plan = Readonly<{
  key: PlanKey;
  display_name: string;
  price_monthly_usd: number;
  features: Readonly<Record<FeatureKey, boolean>>;
  limits: Readonly<Record<LimitKey, number>>;
}>;
export type PlanCatalogue = Readonly<Record<PlanKey, Plan>>;

/** Bytes: what `storage.bytes.max` is counted in. */
const GiB = 1024 ** 3;

const NONE = { app_slugs: false, custom_domains: false, app_analytics: false, webhooks: false };
const ALL = { app_slugs: true, custom_domains: true, app_analytics: true, webhooks: true };

/** The built-in catalogue (see docs/decisions/plans-and-billing.md, "Plans"). */
export const BUILT_IN_PLANS: PlanCatalogue = {
  free: {
    key: 'free',
    display_name: 'Free',
    price_monthly_usd: 0,
    features: NONE,
    limits: {
      'apps.max': 3,
      'release.file_count.max': 500,
      'data.collections.max': 5,
      'app_slugs.max': 0,
      'custom_domains.max': 0,
      'server.cpu_ms.max': 1_000,
      'jobs.waiting.max': 1_000,
      'queues.waiting.max': 1_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 100_000,
      'storage.bytes.max': 1 * GiB,
      'events.retention_days': 1,
      'analytics.retention_days': 0,
    },
  },
  starter: {
    key: 'starter',
    display_name: 'Starter',
    price_monthly_usd: 9,
    features: ALL,
    limits: {
      'apps.max': 10,
      'release.file_count.max': RELEASE_LIMITS.files,
      'data.collections.max': 20,
      'app_slugs.max': 10,
      'custom_domains.max': 1,
      'server.cpu_ms.max': 2_000,
      'jobs.waiting.max': 10_000,
      'queues.waiting.max': 10_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 1_000_000,
      'storage.bytes.max': 10 * GiB,
      'events.retention_days': 7,
      'analytics.retention_days': 7,
    },
  },
  business: {
    key: 'business',
    display_name: 'Business',
    price_monthly_usd: 29,
    features: ALL,
    limits: {
      'apps.max': 50,
      'release.file_count.max': RELEASE_LIMITS.files,
      'data.collections.max': 50,
      'app_slugs.max': 50,
      'custom_domains.max': 10,
      'server.cpu_ms.max': 5_000,
      'jobs.waiting.max': 50_000,
      'queues.waiting.max': 100_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 5_000_000,
      'storage.bytes.max': 50 * GiB,
      'events.retention_days': 30,
      'analytics.retention_days': 30,
    },
  },
  business_plus: {
    key: 'business_plus',
    display_name: 'Business Plus',
    price_monthly_usd: 79,
    features: ALL,
    limits: {
      'apps.max': 150,
      'release.file_count.max': RELEASE_LIMITS.files,
      'data.collections.max': 100,
      'app_slugs.max': 150,
      'custom_domains.max': 50,
      'server.cpu_ms.max': 10_000,
      'jobs.waiting.max': 100_000,
      'queues.waiting.max': 250_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 20_000_000,
      'storage.bytes.max': 100 * GiB,
      'events.retention_days': 90,
      'analytics.retention_days': 90,
    },
  },
  agency: {
    key: 'agency',
    display_name: 'Agency',
    price_monthly_usd: 199,
    features: ALL,
    limits: {
      'apps.max': 500,
      'release.file_count.max': RELEASE_LIMITS.files,
      'data.collections.max': 100,
      'app_slugs.max': 500,
      'custom_domains.max': 200,
      'server.cpu_ms.max': 10_000,
      'jobs.waiting.max': 100_000,
      'queues.waiting.max': 250_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 50_000_000,
      'storage.bytes.max': 250 * GiB,
      'events.retention_days': 90,
      'analytics.retention_days': 90,
    },
  },
  internal: {
    key: 'internal',
    display_name: 'Internal',
    price_monthly_usd: 0,
    features: ALL,
    limits: {
      'apps.max': 10_000,
      'release.file_count.max': RELEASE_LIMITS.files,
      'data.collections.max': 200,
      'app_slugs.max': 10_000,
      'custom_domains.max': 10_000,
      'server.cpu_ms.max': 30_000,
      'jobs.waiting.max': 1_000_000,
      'queues.waiting.max': 1_000_000,
      'bindings.operations.max': 1_000,
      'requests.monthly.max': 1_000_000_000_000,
      'storage.bytes.max': 1024 * GiB,
      'events.retention_days': 90,
      'analytics.retention_days': 90,
    },
  },
};

/** Limits no plan may raise: the contract's release limits and what one sandbox call may take. */
const CEILINGS: Partial<Record<LimitKey, number>> = {
  'release.file_count.max': RELEASE_LIMITS.files,
  'server.cpu_ms.max': 60_000,
  'events.retention_days': 3650,
  'analytics.retention_days': 3650,
};

const count = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(0, 'must not be negative'),
);
const PlanOverride = v.strictObject({
  display_name: v.optional(
    v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(60)),
  ),
  price_monthly_usd: v.optional(v.pipe(v.number(), v.minValue(0, 'must not be negative'))),
  features: v.optional(
    v.strictObject(
      Object.fromEntries(
        FEATURE_KEYS.map((k) => [k, v.optional(v.boolean('must be true or false'))]),
      ),
    ),
  ),
  limits: v.optional(
    v.strictObject(
      Object.fromEntries(
        LIMIT_KEYS.map((k) => [
          k,
          v.optional(
            CEILINGS[k] === undefined
              ? count
              : v.pipe(count, v.maxValue(CEILINGS[k]!, `must be at most ${CEILINGS[k]}`)),
          ),
        ]),
      ),
    ),
  ),
});
const PlansFile = v.strictObject(
  Object.fromEntries(PLAN_KEYS.map((k) => [k, v.optional(PlanOverride)])),
);

/**
 * The catalogue with an operator's overrides merged over the built-in one. Throws an Error whose
 * message names each bad entry (`starter.limits.apps.max: must be a whole number`, or an unknown
 * plan or key), which start-up reports like any other configuration error.
 */
export function mergePlans(
  overrides: unknown,
  base: PlanCatalogue = BUILT_IN_PLANS,
): PlanCatalogue {
  const result = v.safeParse(PlansFile, overrides);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const path = issue.path?.map((p) => String(p.key)).join('.') || '(file)';
      const unknown =
        issue.expected === 'never'
          ? `unknown key (known: ${knownAt(issue.path?.length ?? 0, issue.path?.[1]?.key)})`
          : issue.message;
      return `${path}: ${unknown}`;
    });
    throw new Error(lines.join('; '));
  }
  const out = {} as Record<PlanKey, Plan>;
  for (const key of PLAN_KEYS) {
    const o = (result.output as Record<string, v.InferOutput<typeof PlanOverride> | undefined>)[
      key
    ];
    const b = base[key];
    out[key] = Object.freeze({
      key,
      display_name: o?.display_name ?? b.display_name,
      price_monthly_usd: o?.price_monthly_usd ?? b.price_monthly_usd,
      features: Object.freeze({ ...b.features, ...stripUndefined(o?.features) }),
      limits: Object.freeze({ ...b.limits, ...stripUndefined(o?.limits) }),
    });
  }
  return Object.freeze(out);
}

function knownAt(depth: number, section: unknown): string {
  if (depth <= 1) return PLAN_KEYS.join(', ');
  if (depth === 2) return 'display_name, price_monthly_usd, features, limits';
  return (section === 'features' ? FEATURE_KEYS : LIMIT_KEYS).join(', ');
}

function stripUndefined<T extends Record<string, unknown>>(o: T | undefined): Partial<T> {
  return Object.fromEntries(
    Object.entries(o ?? {}).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

export function isPlanKey(key: string): key is PlanKey {
  return (PLAN_KEYS as readonly string[]).includes(key);
}

/** A stored plan key's plan; an unknown stored key (a catalogue change) reads as Free. */
export function planOf(plans: PlanCatalogue, key: string): Plan {
  return isPlanKey(key) ? plans[key] : plans.free;
}

/** The cheapest plan a customer can be on that passes `test` (for `required_plan_key` in 402 details). */
export function cheapestWith(plans: PlanCatalogue, test: (p: Plan) => boolean): PlanKey | null {
  if (test(plans.free)) return 'free';
  const sellable = PAID_PLAN_KEYS.map((k) => plans[k])
    .filter(test)
    .sort((a, b) => a.price_monthly_usd - b.price_monthly_usd);
  return sellable[0]?.key ?? null;
}

/** The cheapest plan a customer can move up to (it costs more) that gives more of `key` than `plan`; null when none sells more. */
export function upgradeFor(plans: PlanCatalogue, plan: Plan, key: LimitKey): PlanKey | null {
  return cheapestWith(
    plans,
    (p) => p.limits[key] > plan.limits[key] && p.price_monthly_usd > plan.price_monthly_usd,
  );
}

/** The most CPU any plan gives one call (the sandbox's last-resort watchdog is set from it). */
export function largestCpuMs(plans: PlanCatalogue): number {
  return Math.max(...PLAN_KEYS.map((k) => plans[k].limits['server.cpu_ms.max']));
}

/** Catalogues of a server that sells its plans (Stripe configured); on any other, plans come from the operator. */
const sold = new WeakSet<PlanCatalogue>();

/** The catalogue of one configuration (its own object: the built-in one is shared by every configuration). */
export function markSold(plans: PlanCatalogue, sells: boolean): PlanCatalogue {
  const own: PlanCatalogue = Object.freeze({ ...plans });
  if (sells) sold.add(own);
  return own;
}

/**
 * How an account gets `target`, as a message ends: buying it where plans are sold, else from the
 * operator, with the command (a server that sells nothing has no upgrade button).
 */
export function howToGet(plans: PlanCatalogue, target: PlanKey, detail = ''): string {
  const name = `${plans[target].display_name}${detail}`;
  return sold.has(plans)
    ? `upgrade to ${name}`
    : `ask this server's operator for ${name} (\`npm run admin -- set-plan --account <account id> --plan ${target}\`)`;
}
