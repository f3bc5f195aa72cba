/** The App analytics record (field names: docs/decisions/analytics.md "Analytics"). */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';
import { EventSummary } from '../events/schemas.ts';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Day = v.pipe(v.string(), v.isoDate());

export const AnalyticsQuery = v.strictObject({
  range: v.optional(v.picklist(['7d', '30d', '90d'], 'must be 7d, 30d or 90d')),
});

export const AppAnalytics = component(
  'AppAnalytics',
  v.strictObject({
    app_id: v.string(),
    range: v.picklist(['7d', '30d', '90d']),
    /** first and last UTC day covered, inclusive */
    from: Day,
    to: Day,
    /** the plan's analytics retention when it shortened the range asked for; null otherwise */
    clamped_to_days: v.nullable(Count),
    totals: v.strictObject({ requests: Count, bot_requests: Count }),
    daily: v.array(v.strictObject({ date: Day, requests: Count })),
    status_buckets: v.strictObject({ '2xx': Count, '3xx': Count, '4xx': Count, '5xx': Count }),
    top_paths: v.array(v.strictObject({ path: v.string(), requests: Count })),
    referrers: v.array(v.strictObject({ domain: v.string(), requests: Count })),
    routes: v.strictObject({ canonical: Count, slug: Count, custom_domain: Count }),
    runtime_targets: v.strictObject({ static: Count, server: Count, not_found: Count }),
    app_users: v.strictObject({ signups: Count, sessions_created: Count }),
    jobs: v.strictObject({ succeeded: Count, retry: Count, failed: Count, blocked: Count }),
    webhooks: v.strictObject({
      received: Count,
      delivered: Count,
      rejected: Count,
      delivery_failed: Count,
    }),
    recent_errors: v.array(EventSummary),
    generated_at: DateTime,
  }),
);
export type AppAnalytics = v.InferOutput<typeof AppAnalytics>;
