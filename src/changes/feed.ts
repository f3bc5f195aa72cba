/**
 * Changes any node made, as they commit: one connection per node LISTENs on `platform_changes`
 * (database triggers and writers NOTIFY from the transaction that makes a change, so a message
 * arrives only if it committed). When the connection drops, the feed reconnects by itself and
 * announces a resync, since whatever was sent meanwhile is lost: caches then reload all they hold.
 * The connection is its own, not one of the pool's: a listener holds it for the life of the node,
 * and a pool slot taken for good leaves one less for requests under load.
 */
import pg from 'pg';
import type { Logger } from '../logger.ts';

export const CHANGES_CHANNEL = 'platform_changes';

/** `route` carries a hostname; `app`, `secrets` and `account` an id (sql/000016, sql/000018). */
export type Change = { kind: string; hostname?: unknown; id?: unknown };

export type ChangeFeed = {
  /** Connects if not yet connected (idempotent); resolves once listening (or after the first failed attempt). */
  start(): Promise<void>;
  onChange(fn: (change: Change) => void): void;
  /** Called after every (re)connection: messages may have been missed. */
  onResync(fn: () => void): void;
  close(): Promise<void>;
};

export function createChangeFeed(deps: { pool: pg.Pool; log: Logger }): ChangeFeed {
  const changeListeners: ((c: Change) => void)[] = [];
  const resyncListeners: (() => void)[] = [];
  let client: pg.Client | undefined;
  let starting: Promise<void> | undefined;
  let closed = false;
  let retryMs = 100;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  const deliver = (msg: pg.Notification) => {
    if (msg.channel !== CHANGES_CHANNEL || !msg.payload) return;
    let change: Change;
    try {
      change = JSON.parse(msg.payload) as Change;
    } catch {
      return;
    }
    for (const fn of changeListeners) fn(change);
  };

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = undefined;
    void c.end().catch(() => {});
    if (!closed) {
      deps.log.warn('change feed lost its database connection; reconnecting');
      schedule();
    }
  };

  const schedule = () => {
    if (retryTimer || closed) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryTimer.unref?.();
    retryMs = Math.min(retryMs * 2, 5000);
  };

  async function connect(): Promise<void> {
    if (closed || client) return;
    let c: pg.Client | undefined;
    try {
      const fresh = new pg.Client({
        ...deps.pool.options,
        connectionTimeoutMillis: 5000,
      } as pg.ClientConfig);
      fresh.on('error', () => {}); // a dropped connection is handled by 'end' below
      c = fresh;
      await c.connect();
      c.on('notification', deliver);
      const onLost = () => lost(c!);
      c.on('error', onLost);
      c.on('end', onLost);
      client = c;
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
      if (closed) return void (await close());
      retryMs = 100;
      for (const fn of resyncListeners) fn();
    } catch (err) {
      if (c && client === c) return lost(c); // connected, then LISTEN failed: lost() reconnects
      void c?.end().catch(() => {});
      if (!closed) {
        deps.log.warn('change feed could not connect; retrying', { error: (err as Error).message });
        schedule();
      }
    }
  }

  async function close(): Promise<void> {
    closed = true;
    if (retryTimer) clearTimeout(retryTimer);
    const c = client;
    client = undefined;
    if (c) {
      await c.query(`UNLISTEN ${CHANGES_CHANNEL}`).catch(() => {});
      await c.end().catch(() => {});
    }
  }

  return {
    start: () => (starting ??= connect()),
    onChange: (fn) => void changeListeners.push(fn),
    onResync: (fn) => void resyncListeners.push(fn),
    close,
  };
}
