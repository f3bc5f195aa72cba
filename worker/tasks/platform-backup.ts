/**
 * `platform_backup`: on PLATFORM_BACKUP_SCHEDULE (no payload) or asked for from the console
 * (`{backup_id}`, its queued row). A backup where the operator keeps them, the oldest beyond the
 * kept number removed; recorded in backup_runs either way (src/backups/runs.ts).
 */
import type { Task } from 'graphile-worker';
import { recordedBackup } from '../../src/backups/runs.ts';
import type { Deps } from '../../src/deps.ts';

export function platformBackupTask(deps: Deps): Task {
  return async (payload) => {
    const databaseUrl = (deps.pool as unknown as { options: { connectionString: string } }).options
      .connectionString;
    const runId =
      payload &&
      typeof payload === 'object' &&
      typeof (payload as { backup_id?: unknown }).backup_id === 'string'
        ? (payload as { backup_id: string }).backup_id
        : undefined;
    const r = await recordedBackup(
      { db: deps.db, databaseUrl, config: deps.config, log: deps.log },
      { trigger: runId ? 'console' : 'schedule', runId },
    );
    if (r)
      deps.log.info('backup written', {
        backup_id: r.backup_id,
        location: r.location,
        bytes: r.bytes,
        rows: r.rows,
        pruned: r.pruned.length,
        notes: r.notes,
      });
  };
}
