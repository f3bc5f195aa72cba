/** Reading an app's analytics aggregates over a range of UTC days (every query uses the (app_id, day, ...) keys). */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

const n = (x: unknown) => Number(x ?? 0);

export async function trafficRows(db: Executor, appId: string, from: string, to: string) {
  const rows = await sql<{
    day: string;
    route_kind: string;
    target: string;
    status_bucket: string;
    bot: boolean;
    requests: string;
  }>`
    select to_char(day, 'YYYY-MM-DD') as day, route_kind, target, status_bucket, bot, requests
    from analytics_traffic where app_id = ${appId} and day between ${from}::date and ${to}::date`.execute(
    db,
  );
  return rows.rows.map((r) => ({ ...r, requests: n(r.requests) }));
}

/** The busiest rows of a per-day dimension table summed over the range. */
export async function topRows(
  db: Executor,
  table: 'analytics_paths' | 'analytics_referrers',
  column: 'path' | 'domain',
  appId: string,
  from: string,
  to: string,
  limit: number,
) {
  const rows = await sql<{ key: string; requests: string }>`
    select ${sql.ref(column)} as key, sum(requests) as requests from ${sql.table(table)}
    where app_id = ${appId} and day between ${from}::date and ${to}::date
    group by 1 order by 2 desc, 1 limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({ key: r.key, requests: n(r.requests) }));
}

/** `usage_counters` metrics summed over the range (app users, jobs, webhooks). */
export async function counterSums(
  db: Executor,
  appId: string,
  from: string,
  to: string,
): Promise<Record<string, number>> {
  const rows = await sql<{ metric: string; value: string }>`
    select metric, sum(value) as value from usage_counters
    where app_id = ${appId} and day between ${from}::date and ${to}::date group by metric`.execute(
    db,
  );
  return Object.fromEntries(rows.rows.map((r) => [r.metric, n(r.value)]));
}

export async function recentErrors(db: Executor, appId: string, since: Date, limit: number) {
  return db
    .selectFrom('app_events')
    .selectAll()
    .where('app_id', '=', appId)
    .where('severity', '=', 'error')
    .where('created_at', '>=', since)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Removes aggregates older than `days` (the longest analytics window any plan keeps). */
export async function deleteOldAggregates(db: Executor, days: number): Promise<number> {
  let total = 0;
  for (const table of ['analytics_traffic', 'analytics_paths', 'analytics_referrers'] as const) {
    const r =
      await sql`delete from ${sql.table(table)} where day < (now() at time zone 'utc')::date - ${days}::int`.execute(
        db,
      );
    total += Number(r.numAffectedRows ?? 0);
  }
  return total;
}
