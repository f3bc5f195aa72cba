/**
 * A throwaway database for scripts (benchmarks, the Deno smoke test): on DATABASE_URL's server when
 * set, else on a private embedded Postgres in `.data/<kind>-runs/<pid>`. `close()` drops everything.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { prepareDatabase } from '../../src/boot.ts';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';

export async function scratchDatabase(
  kind: string,
  basePort: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const root = path.resolve(new URL('../..', import.meta.url).pathname);
  const runDir = path.join(root, '.data', `${kind}-runs`, String(process.pid));
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: runDir, port: basePort + (process.pid % 5000) });
  const adminUrl = process.env.DATABASE_URL ?? embedded!.url('postgres');
  const name = `${kind.replace(/\W/g, '_')}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  await prepareDatabase(u.toString());
  return {
    url: u.toString(),
    async close() {
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
      await embedded?.stop();
      await rm(runDir, { recursive: true, force: true }).catch(() => {});
    },
  };
}
