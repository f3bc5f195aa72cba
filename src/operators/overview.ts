/** What the Operator section reads: every account at a glance, and the server's health. */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { jobQueueCounts } from '../jobs/queue-stats.ts';
import { LIVE_WITHIN_SECONDS } from '../nodes/heartbeat.ts';
import { monthOf, REQUESTS_METRIC } from '../usage/meter.ts';
import { containsPattern } from '../lib/like.ts';

/** Accounts newest first, with owner, plan, flags and usage; `q` matches id, name or an e-mail. */
export async function operatorAccounts(
  deps: Deps,
  options: { limit: number; q?: string; after?: { at: string; id: string } },
) {
  const period = monthOf(new Date()).start;
  let q = deps.db
    .selectFrom('accounts')
    .innerJoin('users as owner', 'owner.id', 'accounts.owner_user_id')
    .select((eb) => [
      'accounts.id',
      'accounts.name',
      'accounts.plan_key',
      'accounts.entitlement_source',
      'accounts.billing_access_state',
      'accounts.created_at',
      sql<string>`accounts.created_at::text`.as('created_key'),
      'owner.email as owner_email',
      eb
        .selectFrom('apps')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('apps.account_id', '=', 'accounts.id')
        .where('apps.deleted_at', 'is', null)
        .as('apps'),
      eb
        .selectFrom('memberships')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('memberships.account_id', '=', 'accounts.id')
        .as('members'),
      eb
        .selectFrom('account_usage')
        .select('value')
        .whereRef('account_usage.account_id', '=', 'accounts.id')
        .where('account_usage.metric', '=', REQUESTS_METRIC)
        .where('account_usage.period_start', '=', sql<Date>`${period}::date`)
        .as('requests_this_month'),
      eb
        .selectFrom('blobs')
        .select(sql<number>`coalesce(sum(size), 0)::bigint`.as('b'))
        .whereRef('blobs.account_id', '=', 'accounts.id')
        .as('stored_bytes'),
    ])
    .orderBy('accounts.created_at', 'desc')
    .orderBy('accounts.id', 'desc')
    .limit(options.limit + 1);
  const term = options.q?.trim();
  if (term) {
    const like = containsPattern(term);
    q = q.where((eb) =>
      eb.or([
        eb('accounts.id', '=', term),
        eb('accounts.name', 'ilike', like),
        eb.exists(
          eb
            .selectFrom('memberships as m')
            .innerJoin('users as u', 'u.id', 'm.user_id')
            .select('m.user_id')
            .whereRef('m.account_id', '=', 'accounts.id')
            .where('u.email', 'ilike', like),
        ),
      ]),
    );
  }
  if (options.after) {
    const { at, id } = options.after;
    q = q.where(sql<boolean>`(accounts.created_at, accounts.id) < (${at}::timestamptz, ${id})`);
  }
  const rows = await q.execute();
  const page = rows.slice(0, options.limit);
  const ids = page.map((r) => r.id);
  const flags = ids.length
    ? await deps.db
        .selectFrom('account_flags')
        .select(['account_id', 'flag', 'reason', 'created_at'])
        .where('account_id', 'in', ids)
        .execute()
    : [];
  const last = page.at(-1);
  return {
    accounts: page.map((r) => ({
      id: r.id,
      name: r.name,
      owner_email: r.owner_email,
      plan_key: r.plan_key,
      entitlement_source: r.entitlement_source,
      billing_access_state: r.billing_access_state,
      created_at: r.created_at.toISOString(),
      apps: Number(r.apps ?? 0),
      members: Number(r.members ?? 0),
      requests_this_month: Number(r.requests_this_month ?? 0),
      stored_bytes: Number(r.stored_bytes ?? 0),
      flags: flags
        .filter((f) => f.account_id === r.id)
        .map((f) => ({ flag: f.flag, reason: f.reason, created_at: f.created_at.toISOString() })),
    })),
    next: rows.length > options.limit && last ? { at: last.created_key, id: last.id } : null,
  };
}

/** An account's apps with their flags, for takedowns; null when there is no such account. */
export async function operatorAccountApps(deps: Deps, accountId: string) {
  const account = await deps.db
    .selectFrom('accounts')
    .select('id')
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!account) return null;
  const apps = await deps.db
    .selectFrom('apps')
    .select(['id', 'name', 'created_at', 'deleted_at', 'live_release_id'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .limit(200)
    .execute();
  const flags = apps.length
    ? await deps.db
        .selectFrom('app_flags')
        .select(['app_id', 'flag', 'reason', 'created_at'])
        .where(
          'app_id',
          'in',
          apps.map((a) => a.id),
        )
        .execute()
    : [];
  return apps.map((a) => ({
    id: a.id,
    name: a.name,
    created_at: a.created_at.toISOString(),
    deleted_at: a.deleted_at?.toISOString() ?? null,
    live_release_id: a.live_release_id,
    flags: flags
      .filter((f) => f.app_id === a.id)
      .map((f) => ({ flag: f.flag, reason: f.reason, created_at: f.created_at.toISOString() })),
  }));
}

/** Nodes and their heartbeats, the job queue, the blob store and Postgres. */
export async function serverHealth(deps: Deps) {
  const { db } = deps;
  const nodes = await db
    .selectFrom('node_heartbeats')
    .select([
      'node_id',
      'host',
      'pid',
      'role',
      'started_at',
      'beat_at',
      sql<number>`extract(epoch from now() - beat_at)::float8`.as('beat_age'),
    ])
    .orderBy('started_at')
    .execute();
  const workers = await db
    .selectFrom('worker_heartbeats')
    .select([
      'worker_id',
      'host',
      'pid',
      'started_at',
      'beat_at',
      sql<number>`extract(epoch from now() - beat_at)::float8`.as('beat_age'),
    ])
    .orderBy('started_at')
    .execute();
  const jobs = await jobQueueCounts(db);
  const blobs = await db
    .selectFrom('blobs')
    .select([
      'stored_in',
      (eb) => eb.fn.countAll<number>().as('count'),
      sql<number>`coalesce(sum(size), 0)::bigint`.as('bytes'),
    ])
    .groupBy('stored_in')
    .execute();
  const pgInfo = await sql<{ size: number; version: string; connections: number }>`select
      pg_database_size(current_database())::bigint as size,
      current_setting('server_version') as version,
      (select count(*)::int from pg_stat_activity where datname = current_database()) as connections`.execute(
    db,
  );
  const p = pgInfo.rows[0]!;
  const live = (age: number) => age <= LIVE_WITHIN_SECONDS;
  return {
    nodes: nodes.map((n) => ({
      node_id: n.node_id,
      host: n.host,
      pid: n.pid,
      role: n.role,
      started_at: n.started_at.toISOString(),
      beat_at: n.beat_at.toISOString(),
      live: live(n.beat_age),
    })),
    workers: workers.map((w) => ({
      worker_id: w.worker_id,
      host: w.host,
      pid: w.pid,
      started_at: w.started_at.toISOString(),
      beat_at: w.beat_at.toISOString(),
      live: live(w.beat_age),
    })),
    jobs,
    blobs: {
      store: deps.config.blobs.store,
      bucket: deps.config.blobs.s3?.bucket ?? null,
      by_location: blobs.map((b) => ({
        stored_in: b.stored_in,
        count: Number(b.count),
        bytes: Number(b.bytes),
      })),
    },
    postgres: {
      embedded: !deps.config.databaseUrl,
      version: p.version,
      database_bytes: Number(p.size),
      connections: p.connections,
      pool: {
        total: deps.pool.totalCount,
        idle: deps.pool.idleCount,
        waiting: deps.pool.waitingCount,
      },
    },
  };
}
