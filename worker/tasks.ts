import type { TaskList } from 'graphile-worker';
import type { Deps } from '../src/deps.ts';
import type { AppsPlane } from '../src/runtime/routes.ts';
import { appJobTask } from './tasks/app-job.ts';

/** Every graphile-worker task the platform runs, one file each under worker/tasks/. */
export function taskList(deps: Deps, plane: AppsPlane): TaskList {
  return {
    app_job: appJobTask(deps, plane),
  };
}

/** Platform cron lines (graphile-worker crontab syntax). */
export const crontab = '';
