/** What plans, standing and downgrades read and write: the account's plan row, counts, flags, routes. */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { BillingAccessState, EntitlementSource } from '../db/schema.ts';

export async function accountPlanRow(
  db: Executor,
  accountId: string,
  options: { lock?: boolean } = {},
) {
  let q = db
    .selectFrom('accounts')
    .select([
      'id',
      'plan_key',
      'entitlement_source',
      'billing_access_state',
      'grace_ends_at',
      'plan_changed_at',
    ])
    .where('id', '=', accountId);
  if (options.lock) q = q.forUpdate();
  return q.executeTakeFirst();
}
export type AccountPlanRow = NonNullable<Awaited<ReturnType<typeof accountPlanRow>>>;

export async function setAccountPlan(
  db: Executor,
  accountId: string,
  planKey: string,
  source: EntitlementSource,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ plan_key: planKey, entitlement_source: source, plan_changed_at: new Date() })
    .where('id', '=', accountId)
    .execute();
}

export async function setBillingAccess(
  db: Executor,
  accountId: string,
  state: BillingAccessState,
  graceEndsAt: Date | null,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ billing_access_state: state, grace_ends_at: graceEndsAt })
    .where('id', '=', accountId)
    .execute();
}

/** Published (not tombstoned) apps of an account. */
export async function countLiveApps(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('apps')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Per published app: its live release's file count, the collections and webhooks it declares
 * (what a plan change is checked against).
 */
export async function appFootprints(db: Executor, accountId: string) {
  const rows = await sql<{
    app_id: string;
    name: string;
    files: number;
    collections: number;
    webhooks: number;
  }>`
    select a.id as app_id, a.name,
      coalesce((select count(*) from release_files f where f.release_id = a.live_release_id), 0)::int as files,
      coalesce((select count(*) from jsonb_object_keys(coalesce(r.manifest -> 'resources' -> 'data' -> 'collections', '{}'::jsonb))), 0)::int as collections,
      coalesce((select count(*) from jsonb_object_keys(coalesce(r.manifest -> 'resources' -> 'webhooks', '{}'::jsonb))), 0)::int as webhooks
    from apps a left join releases r on r.id = a.live_release_id
    where a.account_id = ${accountId} and a.deleted_at is null
    order by a.created_at, a.id`.execute(db);
  return rows.rows;
}

/** Alias routes that count against a plan (pending and active: not disabled, not removed), oldest first. */
export async function enabledRoutes(db: Executor, accountId: string) {
  return db
    .selectFrom('app_routes')
    .select(['id', 'app_id', 'route_type', 'hostname', 'status', 'created_at'])
    .where('account_id', '=', accountId)
    .where('status', 'not like', 'disabled%')
    .where('status', '<>', 'deleted')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Every name the account holds, whatever its status (deleted ones are released): what adding counts. */
export async function heldRoutes(db: Executor, accountId: string) {
  return db
    .selectFrom('app_routes')
    .select(['id', 'route_type'])
    .where('account_id', '=', accountId)
    .where('status', '<>', 'deleted')
    .execute();
}

export async function disableRoute(
  db: Executor,
  routeId: string,
  status: string,
  reason: string,
): Promise<void> {
  await db
    .updateTable('app_routes')
    .set({ status, disabled_reason: reason, updated_at: new Date() })
    .where('id', '=', routeId)
    .execute();
}

/** The account's monthly totals for its period (requests and any other account metric). */
export async function accountUsage(
  db: Executor,
  accountId: string,
  periodStart: string,
): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('account_usage')
    .select(['metric', 'value'])
    .where('account_id', '=', accountId)
    .where('period_start', '=', sql<Date>`${periodStart}::date`)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.metric, Number(r.value)]));
}

/** Operator flags on the account and on its apps, oldest first. */
export async function flagsOf(db: Executor, accountId: string) {
  const account = await db
    .selectFrom('account_flags')
    .select(['flag', 'reason', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .execute();
  const apps = await db
    .selectFrom('app_flags')
    .innerJoin('apps', 'apps.id', 'app_flags.app_id')
    .select(['app_flags.app_id', 'app_flags.flag', 'app_flags.reason', 'app_flags.created_at'])
    .where('apps.account_id', '=', accountId)
    .orderBy('app_flags.created_at')
    .execute();
  return { account, apps };
}

export async function appFlagNames(db: Executor, appId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('app_flags')
    .select('flag')
    .where('app_id', '=', appId)
    .execute();
  return rows.map((r) => r.flag);
}

export async function setAccountFlag(
  db: Executor,
  accountId: string,
  flag: 'suspended',
  reason: string,
): Promise<void> {
  await db
    .insertInto('account_flags')
    .values({ account_id: accountId, flag, reason })
    .onConflict((oc) => oc.columns(['account_id', 'flag']).doUpdateSet({ reason }))
    .execute();
}

export async function clearAccountFlag(
  db: Executor,
  accountId: string,
  flag: 'suspended',
): Promise<number> {
  const r = await db
    .deleteFrom('account_flags')
    .where('account_id', '=', accountId)
    .where('flag', '=', flag)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function setAppFlag(
  db: Executor,
  appId: string,
  flag: 'suspended' | 'takedown',
  reason: string,
): Promise<void> {
  await db
    .insertInto('app_flags')
    .values({ app_id: appId, flag, reason })
    .onConflict((oc) => oc.columns(['app_id', 'flag']).doUpdateSet({ reason }))
    .execute();
}

export async function clearAppFlag(
  db: Executor,
  appId: string,
  flag: 'suspended' | 'takedown',
): Promise<number> {
  const r = await db
    .deleteFrom('app_flags')
    .where('app_id', '=', appId)
    .where('flag', '=', flag)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A Stripe price the account pays that no plan is mapped to (billing records it; the standing reports it). */
export async function unknownStripePrice(db: Executor, accountId: string): Promise<string | null> {
  const row = await db
    .selectFrom('account_billing')
    .select('unknown_price_id')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.unknown_price_id ?? null;
}
