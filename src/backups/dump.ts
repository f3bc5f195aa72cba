/**
 * `admin backup`: a consistent online backup of the service's Postgres, taken while it serves.
 * Every table is read inside one REPEATABLE READ, READ ONLY transaction (the snapshot pg_dump
 * takes), with `COPY ... TO STDOUT` streamed to a file, never held in memory. pg_dump itself is not
 * used: the embedded server ships only initdb, pg_ctl and postgres, and a pg_dump older than the
 * server refuses to dump it (docs/decisions/operations.md, "Backups").
 */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import * as tar from 'tar';
import type { Config } from '../config.ts';
import {
  BACKED_UP_SCHEMAS,
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type BackupManifest,
  type BackupTable,
  NOT_COPIED,
} from './format.ts';
import { quoteName } from './names.ts';

export type BackupSummary = {
  file: string;
  bytes: number;
  tables: number;
  rows: number;
  created_at: string;
  notes: string[];
};

/**
 * pg-copy-streams pauses the connection's socket and reads it through 'readable'. Node's socket
 * keeps its handle reading on pause() (it stops only in `onread` mode); Deno's stops it, and its
 * stream still counts a read in flight, so no read starts again and the copy waits for ever. The
 * handle is started again here; on Node it is already reading and nothing changes.
 */
function keepReading(client: pg.Client): void {
  const socket = (client as unknown as { connection?: { stream?: unknown } }).connection?.stream as
    | { _handle?: { reading?: boolean; readStart?: () => number } }
    | undefined;
  const handle = socket?._handle;
  if (handle && handle.reading === false) handle.readStart?.();
}

/** Writes a backup archive to `outFile` (through a temporary name: a half-written file never has the final name). */
export async function writeBackup(
  input: { databaseUrl: string; config: Config },
  outFile: string,
  runId?: string,
): Promise<BackupSummary> {
  const dir = path.dirname(path.resolve(outFile));
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(path.join(dir, '.backup-'));
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  try {
    await client.query('begin isolation level repeatable read, read only');
    const createdAt = (await client.query<{ now: Date }>('select now()')).rows[0]!.now;
    const migrations = (
      await client.query<{ id: string }>('select id from platform_migrations order by id')
    ).rows.map((r) => r.id);
    const { rows: found } = await client.query<{ schema: string; name: string; columns: string[] }>(
      `select n.nspname as schema, c.relname as name,
         array(select a.attname::text from pg_attribute a
               where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
               order by a.attnum) as columns
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind = 'r' and n.nspname = any($1) and not c.relispartition
       order by 1, 2`,
      [BACKED_UP_SCHEMAS],
    );
    await mkdir(path.join(work, 'tables'));
    const tables: BackupTable[] = [];
    for (const t of found) {
      const qualified = `${t.schema}.${t.name}`;
      if (NOT_COPIED.has(qualified)) continue;
      const file = `tables/${qualified}.copy`;
      const stream = client.query(
        copyTo(
          `copy ${quoteName(t.schema, t.name)} (${t.columns.map((c) => quoteName(c)).join(', ')}) to stdout`,
        ),
      );
      keepReading(client);
      await pipeline(stream, createWriteStream(path.join(work, file), { mode: 0o600 }));
      tables.push({ ...t, file, rows: stream.rowCount });
    }
    const sequences: BackupManifest['sequences'] = [];
    const { rows: seqs } = await client.query<{ schema: string; name: string }>(
      `select schemaname as schema, sequencename as name from pg_sequences where schemaname = any($1) order by 1, 2`,
      [BACKED_UP_SCHEMAS],
    );
    for (const s of seqs) {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
        `select last_value::text, is_called from ${quoteName(s.schema, s.name)}`,
      );
      sequences.push({ ...s, ...rows[0]! });
    }
    const { rows: blobRows } = await client.query<{ stored_in: string; n: number }>(
      'select stored_in, count(*)::int as n from blobs group by stored_in',
    );
    const version = (
      await client.query<{ v: string }>("select current_setting('server_version') as v")
    ).rows[0]!.v;
    await client.query('commit');

    const notes: string[] = [];
    let secretsKey: BackupManifest['secrets_key'] = 'environment';
    if (!input.config.secretsKey) {
      const key = await readFile(path.resolve(input.config.dataDir, 'secrets.key'), 'utf8');
      await writeFile(path.join(work, 'secrets.key'), key, { mode: 0o600 });
      secretsKey = 'in_archive';
    } else
      notes.push(
        'App secrets are encrypted with PLATFORM_SECRETS_KEY, which is not in the backup: keep it with the backup.',
      );
    const inBucket = blobRows.find((b) => b.stored_in === 's3')?.n ?? 0;
    if (inBucket > 0)
      notes.push(
        `${inBucket} blobs live in the bucket ${input.config.blobs.s3?.bucket ?? '(unknown)'}, not in this backup: the bucket keeps its own copies (turn on its versioning or replication).`,
      );
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      created_at: createdAt.toISOString(),
      ...(runId ? { backup_id: runId } : {}),
      migrations,
      postgres_version: version,
      tables,
      sequences,
      secrets_key: secretsKey,
      blobs: {
        in_postgres: blobRows.find((b) => b.stored_in === 'postgres')?.n ?? 0,
        in_bucket: inBucket,
        bucket: inBucket > 0 ? (input.config.blobs.s3?.bucket ?? null) : null,
      },
    };
    await writeFile(path.join(work, 'manifest.json'), JSON.stringify(manifest, null, 2), {
      mode: 0o600,
    });
    const partial = path.join(work, 'archive.tar.gz');
    await tar.c({ gzip: true, file: partial, cwd: work, portable: true }, [
      'manifest.json',
      'tables',
      ...(secretsKey === 'in_archive' ? ['secrets.key'] : []),
    ]);
    await chmod(partial, 0o600);
    await rename(partial, outFile);
    const { size } = await stat(outFile);
    return {
      file: path.resolve(outFile),
      bytes: size,
      tables: tables.length,
      rows: tables.reduce((n, t) => n + t.rows, 0),
      created_at: manifest.created_at,
      notes,
    };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end().catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}
