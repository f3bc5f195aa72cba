/**
 * A backup where the operator keeps them (PLATFORM_BACKUP_TO: a folder, or "s3" for the
 * PLATFORM_S3_* bucket under `<prefix>backups/`), keeping the newest PLATFORM_BACKUP_KEEP. Run by
 * `admin backup` and, with PLATFORM_BACKUP_SCHEDULE, by the job worker (once per tick across nodes).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createObjectStore } from '../blobs/s3.ts';
import type { Config } from '../config.ts';
import { backupFileName, BACKUP_NAME } from './format.ts';
import { type BackupSummary, writeBackup } from './dump.ts';

export const backupsPrefix = (config: Config) => `${config.blobs.s3?.prefix ?? ''}backups/`;

export async function runBackup(
  input: { databaseUrl: string; config: Config },
  options: { to?: string; runId?: string } = {},
): Promise<BackupSummary & { location: string; pruned: string[] }> {
  const { config } = input;
  const to = options.to ?? config.backups.to;
  const name = backupFileName(new Date());
  if (to === 's3') {
    if (!config.blobs.s3) throw new Error('PLATFORM_S3_BUCKET is needed to keep backups in S3.');
    const store = createObjectStore(config.blobs.s3);
    const work = await mkdtemp(path.join(tmpdir(), 'platform-backup-'));
    try {
      const summary = await writeBackup(input, path.join(work, name), options.runId);
      const key = `${backupsPrefix(config)}${name}`;
      await store.putFile(key, summary.file);
      const all: string[] = [];
      for await (const page of store.list(backupsPrefix(config)))
        for (const o of page) if (BACKUP_NAME.test(path.basename(o.key))) all.push(o.key);
      const pruned = all.sort().reverse().slice(config.backups.keep);
      if (pruned.length) await store.delete(pruned);
      return { ...summary, file: key, location: `s3://${config.blobs.s3.bucket}/${key}`, pruned };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  const summary = await writeBackup(input, path.join(to, name), options.runId);
  const names = (await readdir(to))
    .filter((n) => BACKUP_NAME.test(n))
    .sort()
    .reverse();
  const pruned = names.slice(config.backups.keep);
  for (const n of pruned) await rm(path.join(to, n), { force: true });
  return { ...summary, location: summary.file, pruned: pruned.map((n) => path.join(to, n)) };
}

/** A backup named `s3:<name>` is fetched from the bucket into a temporary file first. */
export async function localBackupFile(
  config: Config,
  file: string,
): Promise<{ file: string; cleanup(): Promise<void> }> {
  if (!file.startsWith('s3:')) {
    await stat(file);
    return { file, cleanup: async () => {} };
  }
  if (!config.blobs.s3) throw new Error('PLATFORM_S3_BUCKET is needed to restore from S3.');
  const store = createObjectStore(config.blobs.s3);
  const name = file.slice(3);
  const key = name.includes('/') ? name : `${backupsPrefix(config)}${name}`;
  const found = await store.stream(key);
  if (!found) throw new Error(`No backup ${key} in the bucket ${config.blobs.s3.bucket}.`);
  const work = await mkdtemp(path.join(tmpdir(), 'platform-restore-'));
  const local = path.join(work, path.basename(key));
  await pipeline(Readable.fromWeb(found.body as never), createWriteStream(local));
  return { file: local, cleanup: () => rm(work, { recursive: true, force: true }) };
}
