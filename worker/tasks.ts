import type { TaskList } from 'graphile-worker';
import type { Deps } from '../src/deps.ts';
import type { NodeRuntime } from '../src/runtime/node-runtime.ts';
import { appJobTask } from './tasks/app-job.ts';
import { billingReconcileTask } from './tasks/billing-reconcile.ts';
import { blobsSweepTask } from './tasks/blobs-sweep.ts';
import { kvSweepTask } from './tasks/kv-sweep.ts';
import { queueDeliverTask } from './tasks/queue-deliver.ts';
import { platformBackupTask } from './tasks/platform-backup.ts';
import type { Config } from '../src/config.ts';
import { domainsRecheckTask } from './tasks/domains-recheck.ts';
import { analyticsRetentionTask } from './tasks/analytics-retention.ts';
import { platformEmailTask } from './tasks/platform-email.ts';
import { eventsRetentionTask, releasesRetentionTask } from './tasks/retention.ts';
import { schedulesTickTask } from './tasks/schedules-tick.ts';

/** Every graphile-worker task the platform runs, one file each under worker/tasks/. */
export function taskList(deps: Deps, runtime: NodeRuntime): TaskList {
  return {
    app_job: appJobTask(deps, runtime),
    platform_email: platformEmailTask(deps),
    app_schedules_tick: schedulesTickTask(deps),
    events_retention: eventsRetentionTask(deps),
    releases_retention: releasesRetentionTask(deps),
    billing_reconcile: billingReconcileTask(deps),
    domains_recheck: domainsRecheckTask(deps),
    analytics_retention: analyticsRetentionTask(deps),
    blobs_sweep: blobsSweepTask(deps),
    kv_sweep: kvSweepTask(deps),
    queue_deliver: queueDeliverTask(deps, runtime),
    platform_backup: platformBackupTask(deps),
  };
}

/**
 * Platform cron (graphile-worker crontab syntax; each tick is enqueued once across all workers).
 * Missed ticks are not backfilled: the schedule fan-out itself runs the current period once.
 */
const PLATFORM_CRONTAB = [
  '* * * * * app_schedules_tick',
  '17 * * * * events_retention',
  '43 3 * * * releases_retention',
  '11 4 * * * billing_reconcile',
  '* * * * * domains_recheck',
  '29 3 * * * analytics_retention',
  '51 4 * * * blobs_sweep',
  '7 * * * * kv_sweep',
];

/** The platform's crontab, with the operator's backup schedule when there is one. */
export function crontabFor(config: Config): string {
  return [
    ...PLATFORM_CRONTAB,
    ...(config.backups.schedule ? [`${config.backups.schedule} platform_backup`] : []),
  ].join('\n');
}
