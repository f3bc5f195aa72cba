import { run, type Runner } from 'graphile-worker';
import { workerLogger } from '../src/boot.ts';
import type { Deps } from '../src/deps.ts';
import type { NodeRuntime } from '../src/runtime/node-runtime.ts';
import { createLiveness } from './liveness.ts';
import { crontabFor, taskList } from './tasks.ts';

/**
 * Completions and failures go through graphile-worker's batchers (delay 0: written on the next tick).
 * Without them a finished job's completion is fire-and-forget, and `stop()` can resolve (and the
 * pool close) before it is written: the job stays locked and would run again after an unlock.
 * With them, `stop()` waits until every completion is written.
 */
export const WORKER_PRESET = { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } };

/** The job worker of this process: graphile-worker's runner, started again whenever it stops by itself. */
export type JobWorker = {
  /** Stops taking jobs, waits for running ones and writes their outcome. */
  stop(): Promise<void>;
  /** How many times the runner stopped by itself and was started again. */
  readonly restarts: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the graphile-worker runner on the service's pool. graphile-worker stops its runner for
 * good when it cannot write a job's outcome (Postgres restarting at that moment): the runner is
 * then started again once the database answers, after releasing the jobs the stopped one still
 * held (they run again), so a database restart never leaves this process without a job worker.
 */
export async function startWorker(deps: Deps, runtime: NodeRuntime): Promise<JobWorker> {
  runtime.listen(); // jobs read the same caches: they hear other nodes' changes too
  const liveness = createLiveness(deps);
  let current: Runner | undefined;
  let stopping = false;
  let restarts = 0;
  let restarting: Promise<void> | undefined;

  const launch = async (): Promise<void> => {
    const runner = await run({
      events: liveness.events,
      pgPool: deps.pool,
      concurrency: deps.config.workerConcurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList: taskList(deps, runtime),
      crontab: crontabFor(deps.config),
      logger: workerLogger(deps.log),
      preset: WORKER_PRESET,
    });
    current = runner;
    runner.promise.then(
      () => stopped(runner, undefined),
      (err: unknown) => stopped(runner, err),
    );
  };

  function stopped(runner: Runner, err: unknown): void {
    if (stopping || runner !== current) return;
    current = undefined;
    deps.log.error(
      'the job worker stopped by itself; starting it again once the database answers',
      { error: err instanceof Error ? err.message : String(err ?? 'stopped') },
    );
    const held = liveness.forget();
    restarting = (async () => {
      for (let delay = 250; !stopping; delay = Math.min(delay * 2, 5000)) {
        try {
          const jobs = await liveness.release(held);
          if (stopping) return;
          await launch();
          restarts++;
          deps.log.warn('the job worker is running again', { released_jobs: jobs, restarts });
          return;
        } catch (e) {
          deps.log.warn('the job worker cannot start yet', {
            error: e instanceof Error ? e.message : String(e),
            retry_in_ms: delay,
          });
          await sleep(delay);
        }
      }
    })();
  }

  await launch();
  liveness.start();
  return {
    get restarts() {
      return restarts;
    },
    async stop() {
      stopping = true;
      try {
        await restarting;
        await current?.stop();
      } finally {
        // the runner's own stop, then our heartbeat rows go: a clean stop is never mistaken for a death
        await liveness.stop();
      }
    },
  };
}
