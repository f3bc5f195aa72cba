/**
 * One SQLite database held by this node: opened under a lease recorded in Postgres, loaded from
 * its chunks there, and written back after every commit before the commit is acknowledged
 * (docs/decisions/sql.md). Calls run one at a time. A commit whose write to Postgres fails, or
 * whose lease was taken over meanwhile, is not acknowledged and the copy in memory is dropped, so
 * the next call starts again from what Postgres holds: nothing acknowledged is ever lost, and
 * nothing unacknowledged is ever served.
 */
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import {
  CHUNK_BYTES,
  ChunkFile,
  registerFile,
  sqlite,
  unregisterFile,
  VFS_NAME,
} from './page-vfs.ts';
import { acquireLease, LEASE_MS, LeaseLost, renewLease, releaseLease } from './lease.ts';
import { guard, type Trusted } from './guard.ts';

type Sqlite3 = Awaited<ReturnType<typeof sqlite>>;
type Oo1Db = InstanceType<Sqlite3['oo1']['DB']>;

export type Row = Record<string, unknown>;

/**
 * How long one call's SQL may run. SQLite runs on the service's thread, so this bounds how long one
 * app's query can hold it (an interrupted statement fails with SQLITE_INTERRUPT, rolled back).
 */
export const SQL_BUDGET_MS = 500;

/** What a statement run by `exec` gives back. */
export type StatementResult = {
  columns: string[];
  rows: unknown[][];
  changes: number;
  lastRowId: number;
};

export class SqlDatabase {
  #db: Oo1Db | undefined;
  #trusted: Trusted | undefined;
  #file: ChunkFile | undefined;
  #epoch = 0;
  /** until when (this node's clock) the lease is surely ours: past it, nothing is served */
  #leaseUntil = 0;
  #renewal: NodeJS.Timeout | undefined;
  #idle: { ms: number; onIdle: () => void } | undefined;
  #lastUsed = performance.now();
  /** calls queued or running */
  #running = 0;
  #queue: Promise<unknown> = Promise.resolve();
  /** when the running call's SQL must stop (performance.now()), checked every few thousand steps */
  #deadline = Number.POSITIVE_INFINITY;
  #closed = false;

  private readonly store: Db;
  readonly id: string;
  readonly nodeId: string;

  private constructor(store: Db, id: string, nodeId: string) {
    this.store = store;
    this.id = id;
    this.nodeId = nodeId;
  }

  /** Creates the database's row if there is none (an empty database). */
  static async create(
    store: Executor,
    row: { id: string; appId: string | null; kind: string; name: string },
  ): Promise<void> {
    await sql`insert into sql_databases (id, app_id, kind, name)
      values (${row.id}, ${row.appId}, ${row.kind}, ${row.name}) on conflict (id) do nothing`.execute(
      store,
    );
  }

  /** Takes the lease (or fails with LeaseHeld) and loads the database. */
  /**
   * Opens the database: takes the lease (or fails with LeaseHeld) and loads it. After `idleMs`
   * without a call it closes itself and gives the lease back, so another node may open it, and
   * `onIdle` hears of it (the node's table of open databases forgets it).
   */
  static async open(
    store: Db,
    id: string,
    nodeId: string,
    idle?: { ms: number; onIdle: () => void },
  ): Promise<SqlDatabase> {
    const d = new SqlDatabase(store, id, nodeId);
    await d.#takeLease();
    try {
      await d.#load();
    } catch (e) {
      await d.close();
      throw e;
    }
    d.#idle = idle;
    d.#renewal = setInterval(() => void d.#renew(), LEASE_MS / 3);
    d.#renewal.unref();
    return d;
  }

  async #takeLease(): Promise<void> {
    const took = await acquireLease(this.store, this.id, this.nodeId);
    this.#epoch = took.epoch;
    this.#leaseUntil = took.until;
  }

  async #renew(): Promise<void> {
    if (this.#closed) return;
    if (this.#idle && this.#running === 0 && performance.now() - this.#lastUsed >= this.#idle.ms) {
      // idle: the lease goes back, for whichever node is asked for the database next
      this.#idle.onIdle();
      await this.close();
      return;
    }
    try {
      this.#leaseUntil = await renewLease(this.store, this.id, this.nodeId, this.#epoch);
    } catch (e) {
      // lost: serve nothing more; a call that comes finds the lease gone and fails
      if (e instanceof LeaseLost) this.#leaseUntil = 0;
    }
  }

  async #load(): Promise<void> {
    const head = await sql<{ size_bytes: number }>`
      select size_bytes from sql_databases where id = ${this.id}`.execute(this.store);
    if (!head.rows[0]) throw new Error(`no database ${this.id}`);
    const chunks = await sql<{ chunk_no: number; data: Uint8Array }>`
      select chunk_no, data from sql_chunks where database_id = ${this.id}`.execute(this.store);
    const file = ChunkFile.fromChunks(chunks.rows, Number(head.rows[0].size_bytes));
    const s3 = await sqlite();
    const name = `${this.id}@${this.#epoch}`;
    registerFile(name, file);
    try {
      const db = new s3.oo1.DB({ filename: name, flags: 'c', vfs: VFS_NAME });
      // the rollback journal in memory: the file is written only at commit, which is what is stored
      db.exec('PRAGMA journal_mode=MEMORY; PRAGMA temp_store=MEMORY; PRAGMA foreign_keys=ON;');
      this.#trusted = guard(s3, db);
      // a query runs on this thread: past its call's budget SQLite is interrupted (SQLITE_INTERRUPT)
      s3.capi.sqlite3_progress_handler(
        db.pointer as number,
        4000,
        () => (performance.now() > this.#deadline ? 1 : 0),
        0,
      );
      this.#db = db;
      this.#file = file;
      file.takeDirty(); // opening reads, and writes nothing worth keeping yet
    } finally {
      unregisterFile(name);
    }
  }

  /** Runs `work` alone on the database, then makes what it committed durable before answering. */
  run<T>(work: (db: Oo1Db) => T, budgetMs = SQL_BUDGET_MS): Promise<T> {
    this.#running++;
    const next = this.#queue
      .then(() => this.#runNow(work, budgetMs))
      .finally(() => {
        this.#running--;
        this.#lastUsed = performance.now();
      });
    this.#queue = next.catch(() => {});
    return next;
  }

  async #runNow<T>(work: (db: Oo1Db) => T, budgetMs: number): Promise<T> {
    if (this.#closed) throw new Error('the database is closed');
    if (performance.now() >= this.#leaseUntil) {
      // the lease may have passed to another node: reload under a new one, or fail
      this.#drop();
      await this.#takeLease();
    }
    if (!this.#db) await this.#load();
    const db = this.#db!;
    let result: T | undefined;
    let failure: { error: unknown } | undefined;
    this.#deadline = performance.now() + budgetMs;
    try {
      result = work(db);
    } catch (error) {
      // a statement that failed rolled back; statements before it may have committed
      failure = { error };
    } finally {
      this.#deadline = Number.POSITIVE_INFINITY;
    }
    await this.#persist();
    if (failure) throw failure.error;
    return result as T;
  }

  /** Runs `work` (inside `run`) as one transaction: all of it is committed, or none. */
  transaction<T>(db: Oo1Db, work: () => T): T {
    const trusted = this.#trusted!;
    trusted(() => db.exec('BEGIN'));
    try {
      const result = work();
      trusted(() => db.exec('COMMIT'));
      return result;
    } catch (e) {
      trusted(() => db.exec('ROLLBACK'));
      throw e;
    }
  }

  async #persist(): Promise<void> {
    const file = this.#file!;
    const dirty = file.takeDirty();
    if (!dirty.changed) return;
    try {
      await commitChunks(this.store, this.id, this.nodeId, this.#epoch, dirty);
    } catch (e) {
      // not stored, so not acknowledged: what is in memory is ahead of Postgres and must go
      this.#drop();
      if (e instanceof LeaseLost) this.#leaseUntil = 0;
      throw e;
    }
  }

  #drop(): void {
    try {
      this.#db?.close();
    } catch {
      // closing a connection whose file is gone
    }
    this.#db = undefined;
    this.#file = undefined;
  }

  /** Whether it was closed (by `close`, or for idleness): a new one must be opened. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the database and gives the lease back (another node may open it at once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    await this.#queue.catch(() => {});
    this.#drop();
    await releaseLease(this.store, this.id, this.nodeId, this.#epoch).catch(() => {});
  }
}

/**
 * One commit's chunks, in one Postgres statement (so one round trip, atomic on its own), fenced by
 * the lease's epoch: when another node holds the lease now, nothing is written.
 */
async function commitChunks(
  store: Db,
  id: string,
  nodeId: string,
  epoch: number,
  dirty: { chunks: { chunk_no: number; data: Uint8Array }[]; size: number },
): Promise<void> {
  const kept = Math.ceil(dirty.size / CHUNK_BYTES);
  const written = await sql<{ fenced: number }>`
    with fenced as (
      update sql_databases set version = version + 1, size_bytes = ${dirty.size}
      where id = ${id} and lease_node = ${nodeId} and lease_epoch = ${epoch}
      returning id
    ), chunks as (
      insert into sql_chunks (database_id, chunk_no, data)
      select f.id, c.no, c.data
      from fenced f,
        unnest(${dirty.chunks.map((c) => c.chunk_no)}::integer[], ${dirty.chunks.map((c) => Buffer.from(c.data))}::bytea[]) as c(no, data)
      on conflict (database_id, chunk_no) do update set data = excluded.data
      returning 1
    ), dropped as (
      delete from sql_chunks where database_id in (select id from fenced) and chunk_no >= ${kept}
      returning 1
    )
    select count(*)::int as fenced from fenced`.execute(store);
  if (!written.rows[0]?.fenced) throw new LeaseLost(id);
}
