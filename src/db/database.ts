import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { usePreparedStatements } from './prepared.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Queries take either the pool or a transaction as their first argument. */
export type Executor = Db | Tx;

// bigint (int8) columns come back as strings by default; our counters fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection (Postgres restarting) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    usePreparedStatements(client);
  });
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** One round trip to Postgres (the health check). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
