/**
 * `admin restore <file>`: a backup into an empty data dir or database. The target is migrated to
 * exactly the backup's migrations, the tables are loaded in one transaction (foreign keys dropped, then
 * added back, which checks every row), sequences are set where they were, and then the target is migrated the rest
 * of the way: a backup taken by an older version restores into this one.
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import * as tar from 'tar';
import { workerLogger } from '../boot.ts';
import type { Config } from '../config.ts';
import { migrate, readMigrations } from '../db/migrate.ts';
import { ApiError } from '../errors.ts';
import { BACKED_UP_SCHEMAS, BACKUP_FORMAT, BACKUP_VERSION, type BackupManifest } from './format.ts';
import { quoteName } from './names.ts';

const refuse = (message: string): never => {
  throw new ApiError('invalid_request', message);
};

/** Unpacks an archive and checks it is a backup this version can restore. */
export async function openBackup(file: string): Promise<{ dir: string; manifest: BackupManifest }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'platform-restore-'));
  try {
    await tar.x({ file, cwd: dir, strict: true });
    const manifest = JSON.parse(
      await readFile(path.join(dir, 'manifest.json'), 'utf8'),
    ) as BackupManifest;
    if (manifest.format !== BACKUP_FORMAT || manifest.version > BACKUP_VERSION)
      refuse(
        `${file} is not a backup this version can read (format ${manifest.format} ${manifest.version}).`,
      );
    const known = new Set((await readMigrations()).map((m) => m.id));
    const unknown = manifest.migrations.filter((m) => !known.has(m));
    if (unknown.length)
      refuse(
        `${file} was made by a newer version (migrations ${unknown.join(', ')}): restore it with that version or newer.`,
      );
    return { dir, manifest };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      'invalid_request',
      `${file} is not a readable backup: ${(err as Error).message}`,
    );
  }
}

/**
 * Puts the archive's secrets key where the service will read it, before anything starts: a data dir
 * that already has another key (or a PLATFORM_SECRETS_KEY that differs) is refused.
 */
export async function placeSecretsKey(config: Config, dir: string, manifest: BackupManifest) {
  if (manifest.secrets_key === 'environment') {
    if (!config.secretsKey)
      refuse(
        "This backup's app secrets were encrypted with PLATFORM_SECRETS_KEY: set it to the same key before restoring.",
      );
    return;
  }
  const key = (await readFile(path.join(dir, 'secrets.key'), 'utf8')).trim();
  if (config.secretsKey) {
    if (config.secretsKey.trim() !== key)
      refuse(
        'PLATFORM_SECRETS_KEY differs from the key in this backup: unset it (the backup brings its own) or set it to that key.',
      );
    return;
  }
  const target = path.resolve(config.dataDir, 'secrets.key');
  const existing = await readFile(target, 'utf8').catch(() => undefined);
  if (existing !== undefined && existing.trim() !== key)
    refuse(`${target} holds another secrets key: restore into an empty data dir.`);
  await mkdir(path.dirname(target), { recursive: true });
  if (existing === undefined) await writeFile(target, `${key}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * The foreign keys of the backed-up schemas, to drop before loading and add back after, as
 * pg_dump's output does: references go in a circle (apps and their live release), so no order of
 * tables satisfies them all, and adding them back checks every restored row.
 */
async function foreignKeys(client: pg.Client) {
  const { rows } = await client.query<{ schema: string; table: string; name: string; def: string }>(
    `select n.nspname as schema, c.relname as table, k.conname as name, pg_get_constraintdef(k.oid) as def
     from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
     where k.contype = 'f' and n.nspname = any($1)`,
    [BACKED_UP_SCHEMAS],
  );
  return rows;
}

export type RestoreSummary = {
  restored_from: string;
  backup_created_at: string;
  tables: number;
  rows: number;
  migrated_after: string[];
};

/** Loads an opened backup into the (empty) database at `databaseUrl`. */
export async function restoreInto(
  databaseUrl: string,
  opened: { dir: string; manifest: BackupManifest },
  file: string,
): Promise<RestoreSummary> {
  const { dir, manifest } = opened;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ t: string | null }>(
      "select to_regclass('public.users')::text as t",
    );
    if (rows[0]!.t) {
      const { rows: users } = await client.query<{ n: number }>(
        'select count(*)::int as n from users',
      );
      if (users[0]!.n > 0)
        refuse('The target already has users: restore into an empty data dir or database.');
    }
    const stage = manifest.migrations.at(-1);
    if (stage) await migrate(databaseUrl, { upTo: stage });
    await runMigrations({ connectionString: databaseUrl, logger: workerLogger() });

    await client.query('begin');
    const keys = await foreignKeys(client);
    for (const k of keys)
      await client.query(
        `alter table ${quoteName(k.schema, k.table)} drop constraint ${quoteName(k.name)}`,
      );
    const present = manifest.tables.map((t) => quoteName(t.schema, t.name));
    if (present.length) await client.query(`truncate ${present.join(', ')}`);
    for (const t of manifest.tables) {
      const cols = t.columns.map((c) => quoteName(c)).join(', ');
      await pipeline(
        createReadStream(path.join(dir, t.file)),
        client.query(copyFrom(`copy ${quoteName(t.schema, t.name)} (${cols}) from stdin`)),
      );
    }
    for (const k of keys)
      await client.query(
        `alter table ${quoteName(k.schema, k.table)} add constraint ${quoteName(k.name)} ${k.def}`,
      );
    for (const s of manifest.sequences)
      await client.query('select setval($1::regclass, $2::bigint, $3)', [
        quoteName(s.schema, s.name),
        s.last_value,
        s.is_called,
      ]);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end().catch(() => {});
  }
  const after = await migrate(databaseUrl);
  await runMigrations({ connectionString: databaseUrl, logger: workerLogger() });
  const tidy = new pg.Client({ connectionString: databaseUrl });
  await tidy.connect();
  try {
    // no worker or node of the backed-up server is running here: nothing it held stays held
    await tidy.query(
      'update graphile_worker._private_jobs set locked_at = null, locked_by = null where locked_by is not null',
    );
    await tidy.query(
      'update graphile_worker._private_job_queues set locked_at = null, locked_by = null where locked_by is not null',
    );
    await tidy.query('delete from worker_heartbeats');
    await tidy.query('delete from node_heartbeats');
  } finally {
    await tidy.end().catch(() => {});
  }
  return {
    restored_from: path.resolve(file),
    backup_created_at: manifest.created_at,
    tables: manifest.tables.length,
    rows: manifest.tables.reduce((n, t) => n + t.rows, 0),
    migrated_after: after,
  };
}
