/**
 * Per-app usage counters by UTC day (`usage_counters`), the figures plans, quotas and analytics
 * read. `outbound.requests` counts app code's fetches. Each write adds to the day's row in one
 * statement, so concurrent writers on any node never lose a count.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

export type UsageMetric = 'outbound.requests';

export async function addUsage(
  db: Executor,
  appId: string,
  metric: UsageMetric,
  n: number,
  at = new Date(),
): Promise<void> {
  if (n <= 0) return;
  const day = at.toISOString().slice(0, 10);
  await db
    .insertInto('usage_counters')
    .values({ app_id: appId, day, metric, value: n })
    .onConflict((oc) =>
      oc
        .columns(['app_id', 'day', 'metric'])
        .doUpdateSet({ value: sql`usage_counters.value + excluded.value` }),
    )
    .execute();
}

/** An app's count of `metric` per day, oldest first, from `since` (a UTC day, YYYY-MM-DD). */
export async function usageByDay(
  db: Executor,
  appId: string,
  metric: UsageMetric,
  since: string,
): Promise<{ day: string; value: number }[]> {
  const rows = await db
    .selectFrom('usage_counters')
    .select(['day', 'value'])
    .where('app_id', '=', appId)
    .where('metric', '=', metric)
    .where('day', '>=', new Date(`${since}T00:00:00Z`))
    .orderBy('day')
    .execute();
  return rows.map((r) => ({
    day: r.day instanceof Date ? r.day.toISOString().slice(0, 10) : String(r.day),
    value: Number(r.value),
  }));
}
