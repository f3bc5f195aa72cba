/** `platform_backup` (on PLATFORM_BACKUP_SCHEDULE): a backup where the operator keeps them, the oldest beyond the kept number removed. */
import type { Task } from 'graphile-worker';
import { runBackup } from '../../src/backups/run.ts';
import type { Deps } from '../../src/deps.ts';

export function platformBackupTask(deps: Deps): Task {
  return async () => {
    const databaseUrl = (deps.pool as unknown as { options: { connectionString: string } }).options
      .connectionString;
    const r = await runBackup({ databaseUrl, config: deps.config });
    deps.log.info('backup written', {
      location: r.location,
      bytes: r.bytes,
      rows: r.rows,
      pruned: r.pruned.length,
      notes: r.notes,
    });
  };
}
