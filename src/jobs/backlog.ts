/**
 * How many jobs an app's code has waiting, bounded by its plan's `jobs.waiting.max` (per app).
 * Each queued row holds a payload of up to 64 KiB, and a job may wait up to 7 days
 * (`delay_seconds`), so without a bound one app could keep any number of rows in the shared queue.
 * Counted in `app_job_backlog`: one more in the enqueue's own transaction (so a rolled-back enqueue
 * counts nothing), one less when the `app_job` task is done with a job for good (success, final
 * failure, blocked), and recounted from the queue by the hourly retention task, which corrects a
 * count that drifted (a worker killed between the two). Only jobs app code enqueued count;
 * schedules, webhook deliveries and runs started through the API have their own bounds.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { planOf, upgradeFor, type PlanCatalogue } from '../plans/catalogue.ts';

/** Counts one more waiting job in the caller's transaction; 402 `quota_exceeded` when the app would pass its plan's bound. */
export async function takeWaitingSlot(
  trx: Executor,
  plans: PlanCatalogue,
  appId: string,
): Promise<void> {
  const { rows } = await sql<{ waiting: number; plan_key: string | null }>`
    with counted as (
      insert into app_job_backlog (app_id, waiting) values (${appId}, 1)
      on conflict (app_id) do update set waiting = app_job_backlog.waiting + 1
      returning waiting)
    select counted.waiting, (select a.plan_key from apps p join accounts a on a.id = p.account_id where p.id = ${appId}) as plan_key from counted`.execute(
    trx,
  );
  const row = rows[0]!;
  const plan = planOf(plans, row.plan_key ?? 'free');
  const limit = plan.limits['jobs.waiting.max'];
  if (row.waiting <= limit) return;
  throw new ApiError(
    'quota_exceeded',
    `This app has ${(row.waiting - 1).toLocaleString('en-US')} jobs waiting to run; ${plan.display_name} allows ${limit.toLocaleString('en-US')} per app. Let some finish first, or put more work in each job's payload.`,
    {
      metric: 'jobs.waiting',
      plan_key: plan.key,
      limit,
      current: row.waiting - 1,
      increment: 1,
      upgrade_required: upgradeFor(plans, plan, 'jobs.waiting.max') !== null,
    },
  );
}

/** One job app code enqueued is done for good. */
export async function releaseWaitingSlot(db: Executor, appId: string): Promise<void> {
  await sql`update app_job_backlog set waiting = greatest(waiting - 1, 0) where app_id = ${appId}`.execute(
    db,
  );
}

/** Recounts every app's waiting jobs from the queue; returns how many counts were corrected. */
export async function recountWaiting(db: Executor): Promise<number> {
  const r = await sql`
    with counts as (
      select j.payload->>'app_id' as app_id, count(*)::int as n
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'app_job' and j.attempts < j.max_attempts and j.payload->>'source' = 'enqueue'
      group by 1)
    update app_job_backlog b set waiting = coalesce(c.n, 0)
    from app_job_backlog b2 left join counts c on c.app_id = b2.app_id
    where b.app_id = b2.app_id and b.waiting <> coalesce(c.n, 0)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
