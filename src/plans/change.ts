/**
 * What moving an account to a plan does, computed by one function for the preview, for the change
 * itself, and for the account's compatibility warnings: violations of the target plan, and the
 * actions that fix what disabling can fix (alias routes over the plan's count or without its
 * feature are disabled, newest first, never deleted). Anything else (more apps, files, collections,
 * webhooks or stored bytes than allowed) makes the change incompatible: refused where a change can be refused.
 */
import type { Deps } from '../deps.ts';
import type { Executor } from '../db/database.ts';
import type { EntitlementSource } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { FeatureKey, LimitKey, PlanCatalogue, PlanKey } from './catalogue.ts';
import {
  accountPlanRow,
  appFootprints,
  disableRoute,
  enabledRoutes,
  setAccountPlan,
} from './queries.ts';
import { formatBytes } from '../lib/bytes.ts';
import { measureStorage, type Measured } from '../storage/measure.ts';

export type Violation = {
  type: 'limit' | 'feature' | 'route' | 'billing';
  key: string;
  route_id: string | null;
  app_id: string | null;
  current: number;
  allowed: number;
  message: string;
};
export type PlanAction = { action: 'disable_route'; route_id: string; reason: string };
export type PlanChange = { compatible: boolean; violations: Violation[]; actions: PlanAction[] };

export const DISABLED_DOWNGRADE = 'disabled_downgrade';
export const DISABLED_BILLING = 'disabled_billing';

const ROUTE_KINDS = [
  { type: 'slug', feature: 'app_slugs', limit: 'app_slugs.max', noun: 'slug' },
  {
    type: 'custom_domain',
    feature: 'custom_domains',
    limit: 'custom_domains.max',
    noun: 'custom domain',
  },
] as const satisfies readonly {
  type: string;
  feature: FeatureKey;
  limit: LimitKey;
  noun: string;
}[];

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/**
 * The violations and actions of putting `accountId` on `target`, read from the database as it is
 * now. `stored`: the account's stored bytes when the caller is measuring them anyway.
 */
export async function planChangeFor(
  db: Executor,
  plans: PlanCatalogue,
  accountId: string,
  target: PlanKey,
  stored?: Promise<Measured>,
): Promise<PlanChange> {
  const plan = plans[target];
  const name = plan.display_name;
  const violations: Violation[] = [];
  const actions: PlanAction[] = [];
  const [apps, { bytes }] = await Promise.all([
    appFootprints(db, accountId),
    stored ?? measureStorage(db, accountId),
  ]);

  const maxBytes = plan.limits['storage.bytes.max'];
  if (bytes > maxBytes) {
    violations.push({
      type: 'limit',
      key: 'storage.bytes.max',
      route_id: null,
      app_id: null,
      current: bytes,
      allowed: maxBytes,
      message: `${name} stores ${formatBytes(maxBytes)} of app data and files; this account has ${formatBytes(bytes)}. Delete ${formatBytes(bytes - maxBytes)} of rows or files first.`,
    });
  }

  const maxApps = plan.limits['apps.max'];
  if (apps.length > maxApps) {
    violations.push({
      type: 'limit',
      key: 'apps.max',
      route_id: null,
      app_id: null,
      current: apps.length,
      allowed: maxApps,
      message: `${name} allows ${plural(maxApps, 'published app')}; this account has ${apps.length}. Unpublish ${apps.length - maxApps} first.`,
    });
  }
  const perApp = [
    {
      key: 'release.file_count.max',
      of: (a: (typeof apps)[number]) => a.files,
      what: (n: number) => `its live release has ${plural(n, 'file')}`,
      fix: 'publish a release with fewer files',
    },
    {
      key: 'data.collections.max',
      of: (a: (typeof apps)[number]) => a.collections,
      what: (n: number) => `it declares ${plural(n, 'data collection')}`,
      fix: 'publish a release that declares fewer',
    },
  ] as const;
  for (const app of apps) {
    for (const check of perApp) {
      const allowed = plan.limits[check.key];
      const current = check.of(app);
      if (current > allowed) {
        violations.push({
          type: 'limit',
          key: check.key,
          route_id: null,
          app_id: app.app_id,
          current,
          allowed,
          message: `App "${app.name}" (${app.app_id}): ${check.what(current)}; ${name} allows ${allowed}. ${check.fix[0]!.toUpperCase()}${check.fix.slice(1)}.`,
        });
      }
    }
    if (app.webhooks > 0 && !plan.features.webhooks) {
      violations.push({
        type: 'feature',
        key: 'webhooks',
        route_id: null,
        app_id: app.app_id,
        current: app.webhooks,
        allowed: 0,
        message: `App "${app.name}" (${app.app_id}) declares webhooks, which ${name} does not include. Publish a release without them.`,
      });
    }
  }

  const routes = await enabledRoutes(db, accountId);
  for (const kind of ROUTE_KINDS) {
    const allowed = plan.features[kind.feature] ? plan.limits[kind.limit] : 0;
    const list = routes.filter((r) => r.route_type === kind.type);
    for (const route of list.slice(allowed).reverse()) {
      const why = plan.features[kind.feature]
        ? `${name} allows ${plural(allowed, kind.noun)}`
        : `${name} does not include ${kind.noun}s`;
      violations.push({
        type: 'route',
        key: kind.limit,
        route_id: route.id,
        app_id: route.app_id,
        current: list.length,
        allowed,
        message: `${kind.noun[0]!.toUpperCase()}${kind.noun.slice(1)} ${route.hostname}: ${why}; it would be disabled (not deleted).`,
      });
      actions.push({
        action: 'disable_route',
        route_id: route.id,
        reason: `${why}; disabled by the move to ${name}.`,
      });
    }
  }
  return { compatible: violations.every((v) => v.type === 'route'), violations, actions };
}

/**
 * Puts an account on `planKey`. `refuse` (an operator's set-plan, a checkout to a lower plan)
 * throws 409 `downgrade_incompatible` when the change is incompatible; without it (a subscription
 * that ended) the change happens anyway, nothing is deleted, and what stays over the limit shows
 * in the account's `compatibility_warnings`. Returns the change it made: the preview's, exactly.
 */
export async function changePlan(
  deps: Deps,
  input: { accountId: string; planKey: PlanKey; source: EntitlementSource; refuse: boolean },
): Promise<PlanChange & { previous_plan_key: string }> {
  const result = await deps.db.transaction().execute(async (trx) => {
    const account = await accountPlanRow(trx, input.accountId, { lock: true });
    if (!account) throw new ApiError('not_found', 'Account not found.');
    return {
      ...(await applyPlanChange(trx, deps.config.plans, {
        ...input,
        currentPlanKey: account.plan_key,
      })),
      previous_plan_key: account.plan_key,
    };
  });
  deps.signals.accountChanged(input.accountId);
  return result;
}

/** 409 `downgrade_incompatible` naming what does not fit. */
export function incompatible(
  plans: PlanCatalogue,
  change: PlanChange,
  current: string,
  target: PlanKey,
): ApiError {
  const blocking = change.violations.filter((v) => v.type !== 'route');
  return new ApiError(
    'downgrade_incompatible',
    `This account does not fit ${plans[target].display_name}: ${blocking.map((v) => v.message).join(' ')}`,
    {
      current_plan_key: current,
      target_plan_key: target,
      violations: blocking,
    },
  );
}

/**
 * The change itself, inside a transaction that holds the account row lock. `disabledStatus`: what
 * a disabled route becomes (`disabled_downgrade`, or `disabled_billing` when payment stopped, which
 * payment recovery turns back on).
 */
export async function applyPlanChange(
  trx: Executor,
  plans: PlanCatalogue,
  input: {
    accountId: string;
    planKey: PlanKey;
    source: EntitlementSource;
    refuse: boolean;
    currentPlanKey: string;
    disabledStatus?: string;
  },
): Promise<PlanChange> {
  const change = await planChangeFor(trx, plans, input.accountId, input.planKey);
  if (!change.compatible && input.refuse)
    throw incompatible(plans, change, input.currentPlanKey, input.planKey);
  for (const a of change.actions)
    await disableRoute(trx, a.route_id, input.disabledStatus ?? DISABLED_DOWNGRADE, a.reason);
  await setAccountPlan(trx, input.accountId, input.planKey, input.source);
  return change;
}
