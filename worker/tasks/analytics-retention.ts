/**
 * `analytics_retention` (daily): deletes analytics aggregates older than the longest analytics window
 * any plan keeps (`analytics.retention_days`; shorter plans are clamped when read, so an upgrade shows
 * what was already collected).
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../src/deps.ts';
import { deleteOldAggregates } from '../../src/analytics/queries.ts';
import { PLAN_KEYS } from '../../src/plans/catalogue.ts';

export async function analyticsRetention(deps: Deps): Promise<{ days: number; deleted: number }> {
  const days = Math.max(
    ...PLAN_KEYS.map((k) => deps.config.plans[k].limits['analytics.retention_days']),
  );
  return { days, deleted: await deleteOldAggregates(deps.db, days) };
}

export function analyticsRetentionTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await analyticsRetention(deps);
    if (r.deleted) helpers.logger.info(`analytics retention: ${JSON.stringify(r)}`);
  };
}
