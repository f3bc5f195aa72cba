/** Reads and writes of `app_routes` for the slug and domain endpoints (a trigger tells every node). */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

export const ROUTE_COLUMNS = [
  'id',
  'app_id',
  'account_id',
  'route_type',
  'hostname',
  'slug',
  'status',
  'disabled_reason',
  'verification_token',
  'verified_at',
  'last_check',
  'last_checked_at',
  'next_check_at',
  'check_attempts',
  'provider',
  'created_at',
  'updated_at',
] as const;

export async function appRoutesOf(db: Executor, appId: string, type?: 'slug' | 'custom_domain') {
  let q = db
    .selectFrom('app_routes')
    .select(ROUTE_COLUMNS)
    .where('app_id', '=', appId)
    .where('status', '<>', 'deleted');
  if (type) q = q.where('route_type', '=', type);
  return q.orderBy('created_at').orderBy('id').execute();
}
export type RouteRow = Awaited<ReturnType<typeof appRoutesOf>>[number];

/** The app's route with this hostname (or id), not removed; locked when asked. */
export async function findRoute(
  db: Executor,
  appId: string,
  by: { hostname?: string; id?: string; type?: 'slug' | 'custom_domain' },
  options: { lock?: boolean } = {},
): Promise<RouteRow | undefined> {
  let q = db
    .selectFrom('app_routes')
    .select(ROUTE_COLUMNS)
    .where('app_id', '=', appId)
    .where('status', '<>', 'deleted');
  if (by.hostname !== undefined) q = q.where('hostname', '=', by.hostname);
  if (by.id !== undefined) q = q.where('id', '=', by.id);
  if (by.type !== undefined) q = q.where('route_type', '=', by.type);
  if (options.lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Whoever holds a hostname now (any app, any account). */
export async function hostnameHolder(db: Executor, hostname: string) {
  return db
    .selectFrom('app_routes')
    .select(['id', 'app_id', 'account_id', 'hostname', 'route_type', 'provider'])
    .where('hostname', '=', hostname)
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
}

/** The custom domain with this hostname, whichever app holds it (the operator's verify). */
export async function domainHolder(db: Executor, hostname: string) {
  return db
    .selectFrom('app_routes')
    .select(['id', 'app_id', 'account_id'])
    .where('hostname', '=', hostname)
    .where('route_type', '=', 'custom_domain')
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
}

export async function insertRoute(
  db: Executor,
  row: {
    id: string;
    appId: string;
    accountId: string;
    type: 'slug' | 'custom_domain';
    hostname: string;
    slug: string | null;
    status: string;
    token: string | null;
    nextCheckAt: Date | null;
    provider: unknown;
  },
): Promise<RouteRow> {
  return db
    .insertInto('app_routes')
    .values({
      id: row.id,
      app_id: row.appId,
      account_id: row.accountId,
      route_type: row.type,
      hostname: row.hostname,
      slug: row.slug,
      status: row.status,
      verification_token: row.token,
      next_check_at: row.nextCheckAt,
      provider: row.provider === null ? null : JSON.stringify(row.provider),
    })
    .returning(ROUTE_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function updateRoute(
  db: Executor,
  id: string,
  set: Partial<{
    status: string;
    disabled_reason: string | null;
    verified_at: Date | null;
    last_check: unknown;
    last_checked_at: Date;
    next_check_at: Date | null;
    check_attempts: number;
    provider: unknown;
    deleted_at: Date;
  }>,
): Promise<RouteRow> {
  const { last_check, provider, ...rest } = set;
  return db
    .updateTable('app_routes')
    .set({
      ...rest,
      ...(last_check !== undefined ? { last_check: JSON.stringify(last_check) } : {}),
      ...(provider !== undefined
        ? { provider: provider === null ? null : JSON.stringify(provider) }
        : {}),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returning(ROUTE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Removes every alias of an app (it was unpublished): tombstones that answer 410 and free their names. */
export async function removeAppRoutes(db: Executor, appId: string): Promise<string[]> {
  const rows = await db
    .updateTable('app_routes')
    .set({ status: 'deleted', deleted_at: new Date(), updated_at: new Date(), next_check_at: null })
    .where('app_id', '=', appId)
    .where('status', '<>', 'deleted')
    .returning('hostname')
    .execute();
  return rows.map((r) => r.hostname);
}

/** Pending domains whose next automatic check is due, oldest due first. */
export async function dueDomainChecks(db: Executor, now: Date, limit: number) {
  return db
    .selectFrom('app_routes')
    .select(ROUTE_COLUMNS)
    .where('status', '=', 'pending_dns')
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
}

/** What every node keeps in memory to map a Host to an app: live routes and recent tombstones. */
export async function servingRoutes(db: Executor, hostname?: string) {
  let q = db
    .selectFrom('app_routes')
    .select(['id', 'app_id', 'route_type', 'hostname', 'slug', 'status', 'deleted_at'])
    .where((eb) =>
      eb.or([
        eb('status', '<>', 'deleted'),
        eb('deleted_at', '>', sql<Date>`now() - interval '30 days'`),
      ]),
    );
  if (hostname !== undefined) q = q.where('hostname', '=', hostname);
  return q.orderBy('created_at').execute();
}
export type ServingRouteRow = Awaited<ReturnType<typeof servingRoutes>>[number];
