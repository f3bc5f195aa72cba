/** `GET /v0/apps/<app_id>/analytics?range=7d|30d|90d`: app read access and the plan's `app_analytics`. */
import { Hono } from 'hono';
import type * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { query } from '../http/validate.ts';
import { planOf } from '../plans/catalogue.ts';
import { requireFeature } from '../plans/enforce.ts';
import { accountPlanRow } from '../plans/queries.ts';
import { analyticsReport, type Range } from './report.ts';
import { AnalyticsQuery, AppAnalytics } from './schemas.ts';

const read = operation({
  operationId: 'getAppAnalytics',
  summary: "An app's traffic, app users, jobs, webhooks and recent errors over 7, 30 or 90 days",
  description:
    "Daily aggregates only: no IP, user agent or visitor id is kept; paths lose their query and ids (`/users/:id`), referrers are host names. The range is clamped to the plan's `analytics.retention_days` (`clamped_to_days` says so). Needs the plan feature `app_analytics` (402 `entitlement_required` otherwise). Figures are added every few seconds (`PLATFORM_ANALYTICS_FLUSH_MS`), so the last seconds may be missing.",
  tags: ['Apps'],
  responses: { 200: AppAnalytics },
  errors: ['entitlement_required'],
});

export function analyticsRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/:app_id/analytics', read, appAccess('apps.read'), query(AnalyticsQuery), async (c) => {
    const { deps } = c.var;
    const account = await accountPlanRow(deps.db, c.var.app.account_id);
    if (!account) throw new ApiError('not_found', 'App not found.');
    const plan = planOf(deps.config.plans, account.plan_key);
    requireFeature(deps.config.plans, plan, account, 'app_analytics', 'Analytics', {
      reading: true,
    });
    const q = c.var.query as v.InferOutput<typeof AnalyticsQuery>;
    return read.reply(
      c,
      200,
      await analyticsReport(deps, c.var.app, plan.key, (q.range ?? '7d') as Range),
    );
  });
  return r;
}
