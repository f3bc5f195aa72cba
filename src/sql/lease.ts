/**
 * Which node holds a SQLite database: a lease in its `sql_databases` row, taken when free, held by
 * this node already, or expired (times are Postgres's own `now()`), renewed a few times a lease,
 * and given back on close. Every acquisition raises `lease_epoch`, which each commit is fenced by
 * (database.ts), so a holder that lost its lease (paused, cut off, presumed dead) can never write
 * over its successor's work. The holder's own view of when its lease ends is measured on its
 * monotonic clock from when it asked, never from when Postgres answered, so it stops serving
 * before Postgres would give the lease away.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/**
 * How long a lease lasts without renewal: how long a dead holder keeps its databases unreachable
 * (PLATFORM_SQL_LEASE_MS, for tests that kill a holder).
 */
export const LEASE_MS = Number(process.env.PLATFORM_SQL_LEASE_MS) || 10_000;
/** Stop serving this long before the lease would end by this node's clock (clocks drift, calls take time). */
const MARGIN_MS = Math.min(1_000, LEASE_MS / 5);

/** The database is held by another node, whose lease has not run out. */
export class LeaseHeld extends Error {
  readonly id: string;
  readonly holder: string;
  constructor(id: string, holder: string) {
    super(`the database ${id} is open on another node (${holder})`);
    this.id = id;
    this.holder = holder;
  }
}

/** This node's lease on the database was taken over: it may no longer serve or write it. */
export class LeaseLost extends Error {
  readonly id: string;
  constructor(id: string) {
    super(`this node no longer holds the database ${id}`);
    this.id = id;
  }
}

export async function acquireLease(
  store: Executor,
  id: string,
  nodeId: string,
): Promise<{ epoch: number; until: number }> {
  const asked = performance.now();
  const took = await sql<{ lease_epoch: number }>`
    update sql_databases
    set lease_node = ${nodeId}, lease_epoch = lease_epoch + 1,
        lease_expires_at = now() + make_interval(secs => ${LEASE_MS / 1000})
    where id = ${id}
      and (lease_node is null or lease_node = ${nodeId} or lease_expires_at < now())
    returning lease_epoch`.execute(store);
  if (took.rows[0])
    return { epoch: Number(took.rows[0].lease_epoch), until: asked + LEASE_MS - MARGIN_MS };
  const held = await sql<{ lease_node: string | null }>`
    select lease_node from sql_databases where id = ${id}`.execute(store);
  if (!held.rows[0]) throw new Error(`no database ${id}`);
  throw new LeaseHeld(id, held.rows[0].lease_node ?? 'unknown');
}

/** Extends this node's lease; LeaseLost when another node took it. Returns the new deadline. */
export async function renewLease(
  store: Executor,
  id: string,
  nodeId: string,
  epoch: number,
): Promise<number> {
  const asked = performance.now();
  const renewed = await sql`
    update sql_databases set lease_expires_at = now() + make_interval(secs => ${LEASE_MS / 1000})
    where id = ${id} and lease_node = ${nodeId} and lease_epoch = ${epoch}`.execute(store);
  if (Number(renewed.numAffectedRows ?? 0) === 0) throw new LeaseLost(id);
  return asked + LEASE_MS - MARGIN_MS;
}

export async function releaseLease(
  store: Executor,
  id: string,
  nodeId: string,
  epoch: number,
): Promise<void> {
  await sql`
    update sql_databases set lease_node = null, lease_expires_at = null
    where id = ${id} and lease_node = ${nodeId} and lease_epoch = ${epoch}`.execute(store);
}
