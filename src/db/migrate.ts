import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));
/** Any constant works; it only has to be the same in every process that migrates. */
const MIGRATION_LOCK = 7_242_001;

export type Migration = { id: string; sql: string; checksum: string };

/** Reads `sql/NNNNNN_name.sql` in order. */
export async function readMigrations(dir = SQL_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => /^\d{6}_[a-z0-9_]+\.sql$/.test(n)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(`${dir}/${name}`, 'utf8');
      return {
        id: name.replace(/\.sql$/, ''),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

/**
 * Applies pending migrations under an advisory lock, each in its own transaction and recorded in
 * `platform_migrations`. A landed migration whose file changed stops start-up: they are never edited.
 * `upTo` stops after that migration (a restore migrates to the backup's stage first). Returns the ids
 * applied by this call.
 */
export async function migrate(
  connectionString: string,
  options: { upTo?: string } = {},
): Promise<string[]> {
  const all = await readMigrations();
  const last =
    options.upTo === undefined ? all.length : all.findIndex((m) => m.id === options.upTo) + 1;
  if (last === 0) throw new Error(`No migration ${options.upTo} in sql/.`);
  const migrations = all.slice(0, last);
  const client = new pg.Client({ connectionString });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`create table if not exists platform_migrations (
      id text primary key, checksum text not null, applied_at timestamptz not null default now())`);
    const { rows } = await client.query<{ id: string; checksum: string }>(
      'select id, checksum from platform_migrations',
    );
    const done = new Map(rows.map((r) => [r.id, r.checksum]));
    for (const m of migrations) {
      const seen = done.get(m.id);
      if (seen !== undefined) {
        if (seen !== m.checksum)
          throw new Error(
            `Migration ${m.id} was edited after it was applied; add a new migration instead.`,
          );
        continue;
      }
      await client.query('begin');
      try {
        await client.query('insert into platform_migrations (id, checksum) values ($1, $2)', [
          m.id,
          m.checksum,
        ]);
        await client.query(m.sql);
        await client.query('commit');
        applied.push(m.id);
      } catch (err) {
        await client.query('rollback');
        throw new Error(`Migration ${m.id} failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
  return applied;
}
