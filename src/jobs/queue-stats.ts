/** The graphile-worker queue at a glance, for the operator's health page and `/metrics`. */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

export type JobQueueCounts = {
  ready: number;
  scheduled: number;
  running: number;
  failed: number;
  /** how long the oldest runnable job has waited, s (null: none is waiting) */
  oldest_ready_seconds: number | null;
};

export async function jobQueueCounts(db: Executor): Promise<JobQueueCounts> {
  const { rows } = await sql<JobQueueCounts>`select
      count(*) filter (where locked_at is null and run_at <= now() and attempts < max_attempts)::int as ready,
      count(*) filter (where locked_at is null and run_at > now() and attempts < max_attempts)::int as scheduled,
      count(*) filter (where locked_at is not null)::int as running,
      count(*) filter (where attempts >= max_attempts)::int as failed,
      extract(epoch from now() - min(run_at) filter (where locked_at is null and run_at <= now() and attempts < max_attempts))::float8 as oldest_ready_seconds
    from graphile_worker._private_jobs`.execute(db);
  const q = rows[0]!;
  return {
    ...q,
    oldest_ready_seconds:
      q.oldest_ready_seconds === null ? null : Math.round(q.oldest_ready_seconds),
  };
}
