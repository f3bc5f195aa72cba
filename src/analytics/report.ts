/** An app's analytics for a range, clamped to its plan's retention: the App analytics record. */
import type { Deps } from '../deps.ts';
import { toEventSummary } from '../events/routes.ts';
import { planOf } from '../plans/catalogue.ts';
import { counterSums, recentErrors, topRows, trafficRows } from './queries.ts';
import type { AppAnalytics } from './schemas.ts';

export const RANGES = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type Range = keyof typeof RANGES;
const TOP = 20;

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

export async function analyticsReport(
  deps: Deps,
  app: { id: string },
  planKey: string,
  range: Range,
  now = new Date(),
): Promise<AppAnalytics> {
  const retention = planOf(deps.config.plans, planKey).limits['analytics.retention_days'];
  const asked = RANGES[range];
  const days = Math.max(1, Math.min(asked, retention));
  const to = dayOf(now);
  const fromDate = new Date(now.getTime() - (days - 1) * 86_400_000);
  const from = dayOf(fromDate);
  const [traffic, paths, refs, counters, errors] = await Promise.all([
    trafficRows(deps.db, app.id, from, to),
    topRows(deps.db, 'analytics_paths', 'path', app.id, from, to, TOP),
    topRows(deps.db, 'analytics_referrers', 'domain', app.id, from, to, TOP),
    counterSums(deps.db, app.id, from, to),
    recentErrors(deps.db, app.id, new Date(`${from}T00:00:00Z`), 20),
  ]);
  const byDay = new Map<string, number>();
  const status = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const routes = { canonical: 0, slug: 0, custom_domain: 0 };
  const targets = { static: 0, server: 0, not_found: 0 };
  let requests = 0;
  let bots = 0;
  for (const r of traffic) {
    if (r.bot) {
      bots += r.requests;
      continue;
    }
    requests += r.requests;
    byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.requests);
    status[r.status_bucket as keyof typeof status] += r.requests;
    routes[r.route_kind as keyof typeof routes] += r.requests;
    targets[r.target as keyof typeof targets] += r.requests;
  }
  const daily = [];
  for (let i = 0; i < days; i++) {
    const date = dayOf(new Date(fromDate.getTime() + i * 86_400_000));
    daily.push({ date, requests: byDay.get(date) ?? 0 });
  }
  const c = (k: string) => counters[k] ?? 0;
  return {
    app_id: app.id,
    range,
    from,
    to,
    clamped_to_days: days < asked ? days : null,
    totals: { requests, bot_requests: bots },
    daily,
    status_buckets: status,
    top_paths: paths.map((p) => ({ path: p.key, requests: p.requests })),
    referrers: refs.map((r) => ({ domain: r.key, requests: r.requests })),
    routes,
    runtime_targets: targets,
    app_users: { signups: c('app_users.signups'), sessions_created: c('app_users.sessions') },
    jobs: {
      succeeded: c('jobs.succeeded'),
      retry: c('jobs.retry'),
      failed: c('jobs.failed'),
      blocked: c('jobs.blocked'),
    },
    webhooks: {
      received: c('webhooks.received'),
      delivered: c('webhooks.delivered'),
      rejected: c('webhooks.rejected'),
      delivery_failed: c('webhooks.delivery_failed'),
    },
    recent_errors: errors.map(toEventSummary),
    generated_at: now.toISOString(),
  };
}
