/**
 * The plan's limits and features where an operation would go past them: 402 with details that say
 * which limit, what is allowed, what the account has, and the cheapest plan that allows more.
 */
import { ApiError } from '../errors.ts';
import type { ResourceState } from '../manifest/resources.ts';
import type { Manifest } from '../manifest/schema.ts';
import {
  howToGet,
  cheapestWith,
  type FeatureKey,
  type LimitKey,
  type Plan,
  type PlanCatalogue,
} from './catalogue.ts';
import type { AccountPlanRow } from './queries.ts';

/** 402 `plan_limit_exceeded`: `what` names the thing counted ("published apps"), `fix` what to do besides upgrading. */
export function planLimitError(
  plans: PlanCatalogue,
  plan: Plan,
  key: LimitKey,
  current: number,
  allowed: number,
  what: string,
  fix: string,
): ApiError {
  const next = cheapestWith(
    plans,
    (p) =>
      p.limits[key] > allowed &&
      p.price_monthly_usd >= plan.price_monthly_usd &&
      p.key !== plan.key,
  );
  const upgrade = next
    ? ` or ${howToGet(plans, next, ` (${plans[next].limits[key].toLocaleString('en-US')})`)}`
    : '';
  return new ApiError(
    'plan_limit_exceeded',
    `Your ${plan.display_name} plan allows ${allowed.toLocaleString('en-US')} ${what}; this would make ${current.toLocaleString('en-US')}. ${fix}${upgrade}.`,
    {
      limit_key: key,
      plan_key: plan.key,
      allowed,
      current,
      required_plan_key: next,
    },
  );
}

/**
 * A new use of a plan-gated feature: 402 `entitlement_required` when the plan lacks it, 402
 * `billing_restricted` while a failed payment is in its grace period (or past it).
 */
export function requireFeature(
  plans: PlanCatalogue,
  plan: Plan,
  account: Pick<AccountPlanRow, 'billing_access_state' | 'grace_ends_at'>,
  feature: FeatureKey,
  what: string,
  options: { reading?: boolean } = {},
): void {
  if (!plan.features[feature]) {
    const required = cheapestWith(plans, (p) => p.features[feature]);
    throw new ApiError(
      'entitlement_required',
      `${what} need a plan with ${feature}; ${plan.display_name} does not include it.${required ? ` To use them, ${howToGet(plans, required, ' or later')}.` : ''}`,
      {
        plan_key: plan.key,
        feature_key: feature,
        required_plan_key: required,
      },
    );
  }
  // reading what a feature already holds (analytics) is not a new use: an overdue payment does not block it
  if (account.billing_access_state !== 'active' && !options.reading) {
    throw new ApiError(
      'billing_restricted',
      `${what} are paused while a payment is overdue${account.grace_ends_at ? ` (grace period ends ${account.grace_ends_at.toISOString().slice(0, 10)})` : ''}; update the payment method to continue.`,
      {
        billing_access_state: account.billing_access_state,
        grace_ends_at: account.grace_ends_at?.toISOString() ?? null,
        feature_key: feature,
      },
    );
  }
}

/** What a release may not exceed: files, and collections in its manifest. */
export function checkBundle(
  plans: PlanCatalogue,
  plan: Plan,
  bundle: { files: unknown[]; manifest: Manifest },
): void {
  const files = bundle.files.length;
  const maxFiles = plan.limits['release.file_count.max'];
  if (files > maxFiles)
    throw planLimitError(
      plans,
      plan,
      'release.file_count.max',
      files,
      maxFiles,
      'files in a release',
      'Publish fewer files (bundle them, or leave out what the app does not serve)',
    );
  const collections = Object.keys(bundle.manifest.resources.data?.collections ?? {}).length;
  const maxCollections = plan.limits['data.collections.max'];
  if (collections > maxCollections)
    throw planLimitError(
      plans,
      plan,
      'data.collections.max',
      collections,
      maxCollections,
      'data collections per app',
      'Declare fewer collections',
    );
}

/** Webhooks the app has not had before are a new use of the `webhooks` feature (those it has keep working). */
export function checkNewWebhooks(
  plans: PlanCatalogue,
  plan: Plan,
  account: AccountPlanRow,
  manifest: Manifest,
  provisioned: ResourceState[],
): void {
  const had = new Set(
    provisioned.filter((r) => r.resource_type === 'webhooks').map((r) => r.resource_name),
  );
  const added = Object.keys(manifest.resources.webhooks ?? {}).filter((name) => !had.has(name));
  if (added.length)
    requireFeature(plans, plan, account, 'webhooks', `New webhooks (${added.join(', ')})`);
}

/** One more published app (a new one, or a tombstoned one published again). */
export function checkNewApp(plans: PlanCatalogue, plan: Plan, published: number): void {
  const max = plan.limits['apps.max'];
  if (published + 1 > max)
    throw planLimitError(
      plans,
      plan,
      'apps.max',
      published + 1,
      max,
      max === 1 ? 'published app' : 'published apps',
      'Unpublish an app you no longer need (`platform unpublish --app <app_id>`, or in the console)',
    );
}
