import { run, type Runner } from 'graphile-worker';
import { workerLogger } from '../src/boot.ts';
import type { Deps } from '../src/deps.ts';
import type { AppsPlane } from '../src/runtime/routes.ts';
import { crontab, taskList } from './tasks.ts';

/** Starts the graphile-worker runner on the service's pool; `stop()` drains running jobs. */
export async function startWorker(deps: Deps, plane: AppsPlane): Promise<Runner> {
  return run({
    pgPool: deps.pool,
    concurrency: deps.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: taskList(deps, plane),
    crontab,
    logger: workerLogger(deps.log),
  });
}
