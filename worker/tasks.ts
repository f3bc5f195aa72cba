import type { TaskList } from 'graphile-worker';
import type { Deps } from '../src/deps.ts';

/** Every graphile-worker task the platform runs, one file each under worker/tasks/. */
export function taskList(_deps: Deps): TaskList {
  return {};
}

/** Platform cron lines (graphile-worker crontab syntax). */
export const crontab = '';
