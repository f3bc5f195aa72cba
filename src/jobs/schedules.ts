/**
 * Scheduled app jobs. A platform cron tick (every minute) computes, for each job a live release
 * schedules, the period `now` falls in; a period is claimed once in `app_schedule_runs`
 * (primary key) and enqueued in the same transaction. So a tick never runs twice, even with
 * several workers; after downtime the current period runs once (missed periods are not
 * replayed); and the schedule set follows whatever release is live at the tick.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { recordEvents } from '../events/record.ts';
import type { Manifest } from '../manifest/schema.ts';
import { addAppJob } from './enqueue.ts';

export type Schedule = 'every_15_minutes' | 'hourly' | 'daily';

/** Start (UTC) of the schedule period containing `now`. */
export function periodStart(schedule: Schedule, now: Date): Date {
  const d = new Date(now);
  d.setUTCSeconds(0, 0);
  if (schedule === 'every_15_minutes')
    d.setUTCMinutes(d.getUTCMinutes() - (d.getUTCMinutes() % 15));
  else if (schedule === 'hourly') d.setUTCMinutes(0);
  else d.setUTCHours(0, 0);
  return d;
}

/** Enqueues every scheduled job whose current period has not run yet. Returns how many were enqueued. */
export async function fanOutSchedules(deps: Deps, now: Date): Promise<number> {
  const rows = await deps.db
    .selectFrom('apps as a')
    .innerJoin('releases as r', 'r.id', 'a.live_release_id')
    .select(['a.id as app_id', 'a.account_id', 'r.id as release_id', 'r.manifest'])
    .where('a.deleted_at', 'is', null)
    .where(sql<boolean>`r.manifest->'resources'->'jobs' is not null`)
    .execute();
  let enqueued = 0;
  for (const row of rows) {
    const jobs = (row.manifest as Manifest).resources.jobs ?? {};
    for (const [name, spec] of Object.entries(jobs)) {
      if (spec.trigger !== 'schedule') continue;
      const period = periodStart(spec.schedule, now);
      const added = await deps.db.transaction().execute(async (trx) => {
        const claim = await trx
          .insertInto('app_schedule_runs')
          .values({ app_id: row.app_id, job_name: name, period_start: period, job_id: 'pending' })
          .onConflict((oc) => oc.doNothing())
          .returning('job_name')
          .executeTakeFirst();
        if (!claim) return false;
        const maxAttempts = spec.max_attempts ?? 3;
        const job = await addAppJob(trx, {
          app_id: row.app_id,
          job_name: name,
          payload: null,
          source: 'schedule',
          maxAttempts,
          runAt: now,
        });
        await trx
          .updateTable('app_schedule_runs')
          .set({ job_id: job.job_id })
          .where('app_id', '=', row.app_id)
          .where('job_name', '=', name)
          .where('period_start', '=', period)
          .execute();
        await recordEvents(trx, [
          {
            app_id: row.app_id,
            account_id: row.account_id,
            release_id: row.release_id,
            type: 'job.enqueued',
            message: `Scheduled job ${name} enqueued (${spec.schedule}).`,
            metadata: {
              job_id: job.job_id,
              job_name: name,
              schedule: spec.schedule,
              period_start: period.toISOString(),
              max_attempts: maxAttempts,
              source: 'schedule',
            },
          },
        ]);
        return true;
      });
      if (added) enqueued++;
    }
  }
  return enqueued;
}
