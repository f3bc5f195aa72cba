/**
 * Changes other nodes made, as they commit: one connection per node LISTENs on `platform_changes`
 * (database triggers and writers NOTIFY from the transaction that makes a change, so a message
 * arrives only if it committed). When the connection drops, the feed reconnects by itself and
 * announces a resync, since whatever was sent meanwhile is lost: caches then reload all they hold.
 */
import type pg from 'pg';
import type { Logger } from '../logger.ts';

export const CHANGES_CHANNEL = 'platform_changes';

export type Change = { kind: 'route'; hostname: string } | { kind: string; [key: string]: unknown };

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
  let client: pg.PoolClient | undefined;
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

  const lost = (c: pg.PoolClient) => {
    if (client !== c) return;
    client = undefined;
    c.release(true);
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
    let c: pg.PoolClient | undefined;
    try {
      c = await deps.pool.connect();
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
      if (c && client === c) lost(c);
      else if (c) c.release(true);
      else if (!closed) {
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
      c.release(true);
    }
  }

  return {
    start: () => (starting ??= connect()),
    onChange: (fn) => void changeListeners.push(fn),
    onResync: (fn) => void resyncListeners.push(fn),
    close,
  };
}
