/**
 * A backup is a gzipped tar (open it with `tar -xzf` to look inside): `manifest.json`, one file of
 * Postgres `COPY` text per table under `tables/`, and `secrets.key` when the service's app-secrets
 * key lives in its data dir (without it the restored secrets could not be read). Everything comes
 * from one repeatable-read snapshot, so the tables agree with each other as of one instant.
 */
export const BACKUP_FORMAT = 'platform-backup';
export const BACKUP_VERSION = 1;

/** The schemas a backup holds: the platform's own tables and graphile-worker's queue. */
export const BACKED_UP_SCHEMAS = ['public', 'graphile_worker'] as const;

/** Bookkeeping of migrations, written by migrating the target, never copied into it. */
export const NOT_COPIED = new Set(['public.platform_migrations', 'graphile_worker.migrations']);

export type BackupTable = {
  schema: string;
  name: string;
  columns: string[];
  file: string;
  rows: number;
};

export type BackupManifest = {
  format: typeof BACKUP_FORMAT;
  version: number;
  created_at: string;
  /** the backup_runs row this archive was written for (its row in the archive still says running) */
  backup_id?: string;
  /** the platform migrations the database had: a restore migrates the target to exactly these first */
  migrations: string[];
  postgres_version: string;
  tables: BackupTable[];
  sequences: { schema: string; name: string; last_value: string; is_called: boolean }[];
  /** where app secrets' key is: in this archive, or the operator's PLATFORM_SECRETS_KEY */
  secrets_key: 'in_archive' | 'environment';
  /** where the bytes of releases and files are: in these tables, or (some) in the bucket */
  blobs: { in_postgres: number; in_bucket: number; bucket: string | null };
};

export function backupFileName(at: Date): string {
  return `platform-backup-${at.toISOString().replace(/[-:.]/g, '')}.tar.gz`;
}

/** platform-backup-20261127T030000123Z.tar.gz: UTC to the millisecond, so names sort by time */
export const BACKUP_NAME = /^platform-backup-\d{8}T\d{9}Z\.tar\.gz$/;
