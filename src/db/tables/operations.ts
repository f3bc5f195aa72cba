/** What the server's operators run: backups. */
import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp } from './columns.ts';

export type BackupStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type BackupTrigger = 'schedule' | 'console' | 'admin';

export interface BackupRunsTable {
  id: string;
  trigger: BackupTrigger;
  requested_by: string | null;
  status: Generated<BackupStatus>;
  queued_at: Generated<Date>;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  location: string | null;
  /** bigint: read as text */
  bytes: ColumnType<string | null, number | null | undefined, number | null>;
  /** bigint: read as text */
  rows: ColumnType<string | null, number | null | undefined, number | null>;
  error: string | null;
}
