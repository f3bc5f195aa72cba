/**
 * Workers D1 for app code: `env.DB.prepare(sql).bind(...).all()` and the rest arrive as one host call
 * (`d1.query`) naming the binding, the statements with their parameters, and how they run. Each
 * binding's database is the app's own (`sql_databases` row `d1:<app>:<database_name>`, made on first
 * use), opened on this node under its lease (database.ts). One statement commits on its own; a
 * batch runs in one transaction, all or nothing, as D1's does. Values cross as D1 gives them: null,
 * numbers, text, and blobs as arrays of bytes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { SQL_BUDGET_MS, SqlDatabase } from './database.ts';
import { sqlite } from './page-vfs.ts';
import { LeaseHeld } from './lease.ts';
import { chargeShare, waitForShare } from './share.ts';

/**
 * How long a database stays open on this node without a call (PLATFORM_SQL_IDLE_MS): then its lease
 * goes back, so the node the app's calls now reach can open it.
 */
const IDLE_MS = Number(process.env.PLATFORM_SQL_IDLE_MS) || 60_000;

/** This process, as a lease holder: unique per process, so a restarted node never reuses a lease. */
const NODE_ID = `node_${process.pid}_${randomBytes(4).toString('hex')}`;

const open = new WeakMap<Deps, Map<string, Promise<SqlDatabase>>>();

export type D1Statement = { sql: string; params: unknown[] };

/** The most rows one statement may answer (its answer crosses into the sandbox whole). */
const MAX_ROWS = 100_000;
export type D1Mode = 'run' | 'all' | 'raw' | 'first' | 'batch' | 'exec';

type Db = Parameters<Parameters<SqlDatabase['run']>[0]>[0];

/** The database behind a binding of `appId`, opened on this node. */
export async function databaseFor(deps: Deps, appId: string, name: string): Promise<SqlDatabase> {
  const id = `d1:${appId}:${name}`;
  let byId = open.get(deps);
  if (!byId) open.set(deps, (byId = new Map()));
  let db = byId.get(id);
  if (!db) {
    db = (async () => {
      await SqlDatabase.create(deps.db, { id, appId, kind: 'd1', name });
      return SqlDatabase.open(deps.db, id, NODE_ID, {
        ms: IDLE_MS,
        onIdle: () => byId.delete(id),
      });
    })();
    byId.set(id, db);
    db.catch(() => byId.delete(id));
  }
  try {
    return await db;
  } catch (e) {
    if (e instanceof LeaseHeld)
      throw new ApiError(
        'not_available',
        `D1_ERROR: the database ${name} is open on another node; calls reach it from there (forwarding between nodes is not built yet)`,
      );
    throw e;
  }
}

/** Whether the app has a D1 database of that name (made by a call or a migration). */
export async function d1DatabaseExists(deps: Deps, appId: string, name: string): Promise<boolean> {
  const found = await sql`select 1 from sql_databases where id = ${`d1:${appId}:${name}`}`.execute(
    deps.db,
  );
  return found.rows.length > 0;
}

/** Closes every database this node opened for `deps` (the service stopping). */
export async function closeD1(deps: Deps): Promise<void> {
  const byId = open.get(deps);
  if (!byId) return;
  open.delete(deps);
  await Promise.all([...byId.values()].map((p) => p.then((d) => d.close()).catch(() => {})));
}

/**
 * A value as SQLite takes it, by D1's rules: every JavaScript number (and a boolean, as 1 or 0) is a
 * REAL, as D1 binds them (5 stored in a TEXT column reads "5.0"), buffers are blobs, undefined
 * and other objects are refused.
 */
function param(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'bigint') return v;
  if (typeof v === 'number') return { real: v };
  if (typeof v === 'boolean') return { real: v ? 1 : 0 };
  if (v && typeof v === 'object' && Array.isArray((v as { $bytes?: unknown }).$bytes))
    return new Uint8Array((v as { $bytes: number[] }).$bytes);
  const undef = v && typeof v === 'object' && (v as { $undefined?: unknown }).$undefined === true;
  const type = undef ? 'undefined' : typeof v;
  throw new ApiError(
    'invalid_request',
    `D1_TYPE_ERROR: Type '${type}' not supported for value '${undef ? 'undefined' : String(v)}'`,
  );
}

export type D1Answer = {
  results: unknown[];
  columns: string[];
  rows: unknown[][];
  meta: {
    changes: number;
    last_row_id: number;
    changed_db: boolean;
    rows_read: number;
    rows_written: number;
    duration: number;
    size_after: number;
  };
};

function runOne(db: Db, s: D1Statement, capi: CapiLike): D1Answer {
  const started = performance.now();
  const values = s.params.map(param);
  let stmt: ReturnType<Db['prepare']>;
  try {
    stmt = db.prepare(s.sql);
  } catch (e) {
    // as workerd words a statement SQLite could not read: where it stopped
    const at = capi.sqlite3_error_offset(db.pointer as number);
    if (e instanceof Error && at >= 0) e.message += ` at offset ${at}`;
    throw e;
  }
  const columns: string[] = [];
  const rows: unknown[][] = [];
  let readOnly = true;
  try {
    if (values.length !== stmt.parameterCount)
      throw new ApiError(
        'invalid_request',
        'D1_ERROR: Wrong number of parameter bindings for SQL query.',
      );
    values.forEach((v, i) => {
      if (v && typeof v === 'object' && 'real' in v)
        capi.sqlite3_bind_double(stmt.pointer as number, i + 1, (v as { real: number }).real);
      else stmt.bind(i + 1, v as never);
    });
    for (let i = 0; i < stmt.columnCount; i++) columns.push(stmt.getColumnName(i) ?? '');
    readOnly = capi.sqlite3_stmt_readonly(stmt.pointer as number) !== 0;
    while (stmt.step()) {
      if (rows.length >= MAX_ROWS)
        throw new ApiError(
          'invalid_request',
          `D1_ERROR: the query answers more than ${MAX_ROWS} rows; page it with LIMIT and OFFSET`,
        );
      const row: unknown[] = [];
      for (let i = 0; i < columns.length; i++) {
        const v = stmt.get(i);
        row.push(v instanceof Uint8Array ? [...v] : typeof v === 'bigint' ? Number(v) : v);
      }
      rows.push(row);
    }
  } finally {
    stmt.finalize();
  }
  const changes = readOnly ? 0 : db.changes();
  const lastRowId = Number(capi.sqlite3_last_insert_rowid(db.pointer as number));
  const results = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  return {
    results,
    columns,
    rows,
    meta: {
      changes,
      last_row_id: lastRowId,
      changed_db: !readOnly && changes > 0,
      rows_read: rows.length,
      rows_written: readOnly ? 0 : changes,
      duration: performance.now() - started,
      size_after: 0,
    },
  };
}

type CapiLike = {
  sqlite3_stmt_readonly(p: number): number;
  sqlite3_error_offset(p: number): number;
  sqlite3_bind_double(p: number, i: number, v: number): number;
  sqlite3_last_insert_rowid(p: number): number | bigint;
};

const MODES = new Set(['run', 'all', 'raw', 'first', 'batch', 'exec']);

/** The guest's `d1.query` call, checked: statements of SQL text and parameter lists, and a mode. */
export async function d1Call(
  deps: Deps,
  appId: string,
  databaseName: string,
  statements: unknown,
  mode: unknown,
): Promise<D1Answer[]> {
  if (typeof mode !== 'string' || !MODES.has(mode))
    throw new ApiError('invalid_request', 'D1_ERROR: unknown call');
  if (!Array.isArray(statements) || statements.length === 0 || statements.length > 1000)
    throw new ApiError('invalid_request', 'D1_ERROR: a call has 1 to 1,000 statements');
  const list = statements.map((s) => {
    const o = (s ?? {}) as { sql?: unknown; params?: unknown };
    if (typeof o.sql !== 'string')
      throw new ApiError('invalid_request', 'D1_ERROR: SQL must be a string');
    return { sql: o.sql, params: Array.isArray(o.params) ? o.params : [] };
  });
  try {
    return await d1Query(deps, appId, databaseName, list, mode as D1Mode);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    // SQLite's own message, as D1 words it: "D1_ERROR: no such table: t: SQLITE_ERROR"
    // SQLite's own message, as D1 words it: "D1_ERROR: no such table: t: SQLITE_ERROR", an
    // extended code named after its primary one ("SQLITE_CONSTRAINT (extended: ...)")
    if (/^SQLITE_INTERRUPT\b/.test(String((e as Error).message)))
      throw new ApiError(
        'invalid_request',
        `D1_ERROR: the query ran longer than the platform allows one call's SQL (${SQL_BUDGET_MS} ms) and was stopped: SQLITE_INTERRUPT`,
      );
    const m = /^(SQLITE_[A-Z]+)(_[A-Z_]+)?: sqlite3 result code \d+: (.*)$/s.exec(
      String((e as Error).message),
    );
    if (m)
      throw new ApiError(
        'invalid_request',
        `D1_ERROR: ${m[3]}: ${m[1]}${m[2] ? ` (extended: ${m[1]}${m[2]})` : ''}`,
      );
    throw e;
  }
}

/** Runs a D1 call's statements for the app and answers as D1's results (one per statement). */
export async function d1Query(
  deps: Deps,
  appId: string,
  databaseName: string,
  statements: D1Statement[],
  mode: D1Mode,
): Promise<D1Answer[]> {
  await waitForShare(appId);
  const { capi } = await sqlite();
  // fetched last, so a database closing for idleness is not caught between its lookup and its call
  let database = await databaseFor(deps, appId, databaseName);
  if (database.closed) database = await databaseFor(deps, appId, databaseName);
  return database.run((db) => {
    const started = performance.now();
    // charged when it ends, whether it answered or failed (an interrupted query used its time)
    try {
      return runMode(db);
    } finally {
      chargeShare(appId, performance.now() - started);
    }
  });
  function runMode(db: Db): D1Answer[] {
    if (mode === 'exec') {
      // exec: statements without parameters, one after another, each committing on its own
      return statements.map((s) => runOne(db, s, capi as unknown as CapiLike));
    }
    if (mode !== 'batch') return [runOne(db, statements[0]!, capi as unknown as CapiLike)];
    return database.transaction(db, () =>
      statements.map((s) => runOne(db, s, capi as unknown as CapiLike)),
    );
  }
}

/** SQLITE_FLOAT, the storage class of a REAL value. */
const REAL = 2;

/** A SQL literal for a value SQLite gave back (`real`: it was stored as a REAL, so 7 is written 7.0). */
function literal(v: unknown, real: boolean): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' && real && Number.isInteger(v)) return `${v}.0`;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof Uint8Array) return `X'${Buffer.from(v).toString('hex')}'`;
  return `'${String(v).replaceAll("'", "''")}'`;
}

/**
 * The database as SQL text, as `wrangler d1 export` writes it: each table's CREATE statement and
 * its rows as INSERTs, then indexes, views and triggers; SQLite's and D1's own tables left out.
 */
export async function d1Export(deps: Deps, appId: string, name: string): Promise<string> {
  const database = await databaseFor(deps, appId, name);
  const { capi } = await sqlite();
  const columnType = (p: number, i: number) => capi.sqlite3_column_type(p, i);
  return database.run((db) => {
    const out = ['PRAGMA defer_foreign_keys=TRUE;'];
    const objects = db.selectObjects(
      "select type, name, sql from sqlite_master where sql is not null and name not like 'sqlite_%' and name not like '_cf_%' order by case type when 'table' then 0 else 1 end, rowid",
    ) as { type: string; name: string; sql: string }[];
    for (const o of objects) {
      out.push(`${o.sql};`);
      if (o.type !== 'table') continue;
      const quoted = `"${o.name.replaceAll('"', '""')}"`;
      const stmt = db.prepare(`select * from ${quoted}`);
      try {
        while (stmt.step()) {
          const values: string[] = [];
          for (let i = 0; i < stmt.columnCount; i++)
            values.push(literal(stmt.get(i), columnType(stmt.pointer as number, i) === REAL));
          out.push(`INSERT INTO ${quoted} VALUES(${values.join(',')});`);
        }
      } finally {
        stmt.finalize();
      }
    }
    return `${out.join('\n')}\n`;
  }, 30_000);
}
