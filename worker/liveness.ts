/**
 * Dead job workers lose their jobs, with no operator: every worker process beats a row per
 * graphile-worker worker id in `worker_heartbeats`; a surviving process that sees another's beat
 * older than PLATFORM_WORKER_STALE_SECONDS releases that worker's locked jobs with graphile-worker's
 * `force_unlock_workers` (they run again, attempts counted) and removes its rows.
 * Times are the database's own (`now()`), so clocks on different machines do not matter.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { WorkerEvents } from 'graphile-worker';
import type { Deps } from '../src/deps.ts';

export type Liveness = {
  events: WorkerEvents;
  start(): void;
  stop(): Promise<void>;
  /** The worker ids beaten so far, no longer beaten (their runner is gone). */
  forget(): string[];
  /** Releases the jobs those ids hold and removes their rows; throws while the database does not answer. */
  release(workerIds: string[]): Promise<number>;
};

export function createLiveness(deps: Deps): Liveness {
  const events = new EventEmitter() as WorkerEvents;
  const processId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const ids = new Set<string>();
  const staleMs = deps.config.workerStaleSeconds * 1000;
  let timers: ReturnType<typeof setInterval>[] = [];
  /** Since when every beat has gone through: after an outage, peers get a full period to beat again before any is judged. */
  let healthySince: number | undefined;

  // jobs are locked by the pool's id (graphile-worker 0.17 fetches jobs per pool), or by a worker's in other modes
  events.on('pool:create', ({ workerPool }) => {
    ids.add(workerPool.id);
    void beat();
  });
  events.on('worker:create', ({ worker }) => {
    ids.add(worker.workerId);
    void beat();
  });

  async function beat(): Promise<void> {
    if (!ids.size) return;
    try {
      await deps.db
        .insertInto('worker_heartbeats')
        .values(
          [...ids].map((id) => ({
            worker_id: id,
            process_id: processId,
            host: hostname(),
            pid: process.pid,
          })),
        )
        .onConflict((oc) => oc.column('worker_id').doUpdateSet({ beat_at: sql`now()` }))
        .execute();
      healthySince ??= Date.now();
    } catch (err) {
      healthySince = undefined;
      deps.log.warn('worker heartbeat failed', { error: String(err) });
    }
  }

  async function reap(): Promise<void> {
    if (healthySince === undefined || Date.now() - healthySince < staleMs) return;
    try {
      const stale = await deps.db
        .selectFrom('worker_heartbeats')
        .select(['worker_id', 'host', 'pid'])
        .where('process_id', '!=', processId)
        .where(
          'beat_at',
          '<',
          sql<Date>`now() - make_interval(secs => ${deps.config.workerStaleSeconds})`,
        )
        .execute();
      if (!stale.length) return;
      const workerIds = stale.map((r) => r.worker_id);
      const released = await release(workerIds);
      const processes = [...new Set(stale.map((r) => `${r.host} pid ${r.pid}`))];
      deps.log.warn('released the jobs of job workers that stopped beating', {
        workers: workerIds.length,
        processes,
        jobs: released,
      });
    } catch (err) {
      deps.log.warn('could not check for dead job workers', { error: String(err) });
    }
  }

  async function release(workerIds: string[]): Promise<number> {
    if (!workerIds.length) return 0;
    return deps.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from graphile_worker._private_jobs where locked_by = any(${workerIds}::text[])`.execute(
        trx,
      );
      await sql`select graphile_worker.force_unlock_workers(${workerIds}::text[])`.execute(trx);
      await trx.deleteFrom('worker_heartbeats').where('worker_id', 'in', workerIds).execute();
      return rows[0]?.n ?? 0;
    });
  }

  return {
    events,
    forget() {
      const gone = [...ids];
      ids.clear();
      return gone;
    },
    release,
    start() {
      timers = [
        setInterval(() => void beat(), Math.max(200, staleMs / 6)),
        setInterval(() => void reap(), Math.max(200, staleMs / 3)),
      ];
      for (const t of timers) t.unref();
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      timers = [];
      if (ids.size)
        await deps.db
          .deleteFrom('worker_heartbeats')
          .where('process_id', '=', processId)
          .execute()
          .catch(() => {});
    },
  };
}
