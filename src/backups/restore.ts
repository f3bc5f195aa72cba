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

/** Tables a service writes by merely starting (or a visitor by asking for a link): no one's data. */
const BOOKKEEPING = new Set([
  'public.secrets_key_check',
  'public.node_heartbeats',
  'public.worker_heartbeats',
  'public.abuse_counters',
  'public.email_auth_tokens',
  'public.dev_outbox',
  'public.platform_migrations',
]);

/**
 * Refuses a target holding anything someone made, naming the tables and their rows: a restore
 * replaces whole tables, so loading over data would lose it.
 */
async function refuseUnlessEmpty(client: pg.Client, databaseUrl: string) {
  const { rows: tables } = await client.query<{ schema: string; name: string }>(
    `select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'r' and n.nspname = 'public' and not c.relispartition order by 2`,
  );
  const first = ['users', 'accounts', 'apps', 'releases'];
  const rank = (name: string) => (first.includes(name) ? first.indexOf(name) : first.length);
  tables.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  const held: string[] = [];
  for (const t of tables) {
    if (BOOKKEEPING.has(`${t.schema}.${t.name}`)) continue;
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from ${quoteName(t.schema, t.name)}`,
    );
    if (rows[0]!.n > 0) held.push(`${t.name} (${rows[0]!.n} ${rows[0]!.n === 1 ? 'row' : 'rows'})`);
  }
  if (!held.length) return;
  const where = new URL(databaseUrl);
  refuse(
    `The target database ${where.pathname.slice(1)} on ${where.host} is not empty: it holds ${held.slice(0, 6).join(', ')}${held.length > 6 ? ` and ${held.length - 6} more tables` : ''}. Restore into an empty data dir or database; nothing was changed.`,
  );
}

/** Every table holds exactly the rows the backup wrote for it, or the load is rolled back. */
async function checkCounts(client: pg.Client, manifest: BackupManifest) {
  const wrong: string[] = [];
  for (const t of manifest.tables) {
    const { rows } = await client.query<{ n: string }>(
      `select count(*)::text as n from ${quoteName(t.schema, t.name)}`,
    );
    if (Number(rows[0]!.n) !== t.rows)
      wrong.push(`${t.schema}.${t.name}: ${rows[0]!.n} of ${t.rows}`);
  }
  if (wrong.length)
    throw new ApiError(
      'internal_error',
      `The restored tables do not hold what the backup wrote (${wrong.join('; ')}): nothing was restored.`,
    );
}

export type RestoreSummary = {
  restored_from: string;
  backup_created_at: string;
  tables: number;
  rows: number;
  migrated_after: string[];
  /** wall time of the whole restore, load, checks and migrations included */
  duration_ms: number;
};

/** Loads an opened backup into the (empty) database at `databaseUrl`. */
export async function restoreInto(
  databaseUrl: string,
  opened: { dir: string; manifest: BackupManifest },
  file: string,
): Promise<RestoreSummary> {
  const { dir, manifest } = opened;
  const began = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await refuseUnlessEmpty(client, databaseUrl);
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
    // the counting and notifying triggers describe live writes; the backup's own counters already hold their sums
    for (const t of present) await client.query(`alter table ${t} disable trigger user`);
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
    for (const t of present) await client.query(`alter table ${t} enable trigger user`);
    await checkCounts(client, manifest);
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
    // the archive's own run finished (here it is); any other one in it never will on this server
    if (manifest.backup_id)
      await tidy.query(
        "update backup_runs set status = 'succeeded', finished_at = $2 where id = $1 and status = 'running'",
        [manifest.backup_id, manifest.created_at],
      );
    await tidy.query(
      "update backup_runs set status = 'failed', finished_at = now(), error = 'It had not finished when the backup restored here was taken.' where status in ('queued', 'running')",
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
    duration_ms: Math.round(performance.now() - began),
  };
}
