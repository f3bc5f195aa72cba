import { run, type Runner } from 'graphile-worker';
import { workerLogger } from '../src/boot.ts';
import type { Deps } from '../src/deps.ts';
import type { AppsPlane } from '../src/origin/plane.ts';
import { createLiveness } from './liveness.ts';
import { crontab, taskList } from './tasks.ts';

/**
 * Completions and failures go through graphile-worker's batchers (delay 0: written on the next tick).
 * Without them a finished job's completion is fire-and-forget, and `stop()` can resolve (and the
 * pool close) before it is written: the job stays locked and would run again after an unlock.
 * With them, `stop()` waits until every completion is written.
 */
export const WORKER_PRESET = { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } };

/** Starts the graphile-worker runner on the service's pool; `stop()` drains running jobs and writes their outcome. */
export async function startWorker(deps: Deps, plane: AppsPlane): Promise<Runner> {
  void plane.feed.start(); // jobs read the same caches: they hear other nodes' changes too
  const liveness = createLiveness(deps);
  const runner = await run({
    events: liveness.events,
    pgPool: deps.pool,
    concurrency: deps.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: taskList(deps, plane),
    crontab,
    logger: workerLogger(deps.log),
    preset: WORKER_PRESET,
  });
  liveness.start();
  // the runner's own stop, then our heartbeat rows go: a clean stop is never mistaken for a death
  const stop = runner.stop.bind(runner);
  runner.stop = async () => {
    try {
      await stop();
    } finally {
      await liveness.stop();
    }
  };
  return runner;
}
