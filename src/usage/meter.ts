/**
 * The one place where facts about requests served on app origins are collected. Each request adds
 * to in-memory counters (no I/O); a flush every `PLATFORM_USAGE_FLUSH_MS`, when many accounts are
 * waiting, and at shutdown adds them to Postgres in one statement per table, which returns the
 * shared monthly totals every node has added up. The monthly quota check reads those totals plus
 * what this node has counted since: no database round trip on a request.
 *
 * Overshoot: a node learns other nodes' counts at its own flushes, so an account can go over its
 * quota by at most what the other nodes serve it in one flush interval (docs/decisions/plans-and-billing.md).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';

export const REQUESTS_METRIC = 'requests.monthly';
/** Accounts with pending counts that trigger an early flush. */
const FLUSH_AT_ACCOUNTS = 5000;
/** Pending counts kept when flushes keep failing (per account they only add up, so memory stays bounded by accounts). */
const MAX_PENDING_ACCOUNTS = 100_000;

/** The UTC month a moment falls in: its first day and the first day of the next month. */
export function monthOf(at: Date): { start: string; end: string } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return { start: iso(new Date(Date.UTC(y, m, 1))), end: iso(new Date(Date.UTC(y, m + 1, 1))) };
}

type AccountCount = {
  /** the month `total` and `pending` belong to */
  period: string;
  /** the shared total at the last flush (every node's requests) */
  total: number;
  /** counted here since the last flush */
  pending: number;
  /** per app, for the daily per-app figures */
  apps: Map<string, number>;
  /** when this node last served the account (accounts idle for IDLE_MS are forgotten) */
  seenAt: number;
};
const IDLE_MS = 10 * 60_000;

export type RequestFact = { accountId: string; appId: string; status: number };

export type RequestMeter = ReturnType<typeof createRequestMeter>;

export function createRequestMeter(options: {
  db: Db;
  log: Logger;
  flushMs: number;
  now?: () => Date;
}) {
  const now = options.now ?? (() => new Date());
  const counts = new Map<string, AccountCount>();
  let period = monthOf(now()).start;
  let periodCheckedAt = 0;
  let flushing: Promise<void> | undefined;
  let closed = false;
  /** Date.now() at the last flush: a cheap clock for `seenAt` on the hot path */
  let lastTick = Date.now();

  /** The month rolls over: counts of the old month still flush to it, totals start again. */
  function currentPeriod(): string {
    const t = Date.now();
    if (t - periodCheckedAt > 1000) {
      periodCheckedAt = t;
      period = monthOf(now()).start;
    }
    return period;
  }

  const loads = new WeakMap<AccountCount, Promise<void>>();

  function entry(accountId: string): AccountCount {
    let e = counts.get(accountId);
    const p = currentPeriod();
    if (!e) {
      e = { period: p, total: 0, pending: 0, apps: new Map(), seenAt: Date.now() };
      counts.set(accountId, e);
      loads.set(e, loadTotal(accountId, e));
      if (counts.size >= FLUSH_AT_ACCOUNTS) void flush();
    } else if (e.period !== p && e.pending === 0) {
      e.period = p;
      e.total = 0;
    }
    return e;
  }

  /** Counts one served request. Never throws and never waits. */
  function record(fact: RequestFact): void {
    const e = entry(fact.accountId);
    e.pending++;
    e.seenAt = lastTick;
    e.apps.set(fact.appId, (e.apps.get(fact.appId) ?? 0) + 1);
  }

  /** Requests of the current month known to this node: the shared total plus what it counted since. */
  function used(accountId: string): number {
    const e = counts.get(accountId);
    if (!e || e.period !== currentPeriod()) return 0;
    return e.total + e.pending;
  }

  async function flushOnce(): Promise<void> {
    const batch: { accountId: string; period: string; n: number; apps: Map<string, number> }[] = [];
    lastTick = Date.now();
    for (const [accountId, e] of counts) {
      if (e.pending === 0) {
        if (e.period !== currentPeriod() || lastTick - e.seenAt > IDLE_MS) counts.delete(accountId);
        continue;
      }
      batch.push({ accountId, period: e.period, n: e.pending, apps: e.apps });
      e.total += e.pending; // optimistic: the flush below returns the exact total
      e.pending = 0;
      e.apps = new Map();
    }
    const watched = [...counts.keys()].filter((id) => counts.get(id)!.period === currentPeriod());
    if (batch.length === 0 && watched.length === 0) return;
    try {
      if (batch.length) await addBatch(batch);
    } catch (err) {
      // Merge back: the next flush tries again (both tables commit together, so nothing is lost or doubled).
      for (const b of batch) {
        const e = counts.get(b.accountId);
        if (!e || counts.size > MAX_PENDING_ACCOUNTS) continue;
        e.total -= b.n;
        e.pending += b.n;
        for (const [appId, n] of b.apps) e.apps.set(appId, (e.apps.get(appId) ?? 0) + n);
      }
      options.log.warn('usage flush failed; will retry', {
        accounts: batch.length,
        error: String(err),
      });
      return;
    }
    try {
      // Every followed account's shared total, so this node sees what the others counted.
      const p = currentPeriod();
      const totals = await sql<{ account_id: string; value: string }>`
        select account_id, value from account_usage
        where account_id = any(${watched}::text[]) and period_start = ${p}::date and metric = ${REQUESTS_METRIC}`.execute(
        options.db,
      );
      for (const row of totals.rows) {
        const e = counts.get(row.account_id);
        if (e && e.period === p) e.total = Number(row.value);
      }
    } catch {
      // the next flush reads them again
    }
  }

  /** One flush's counts, added to the monthly account totals and the per-app daily counters in one transaction. */
  async function addBatch(
    batch: { accountId: string; period: string; n: number; apps: Map<string, number> }[],
  ): Promise<void> {
    await options.db.transaction().execute(async (trx) => {
      await sql`
        insert into account_usage (account_id, period_start, metric, value)
        select a, p::date, ${REQUESTS_METRIC}, n from unnest(${batch.map((b) => b.accountId)}::text[], ${batch.map((b) => b.period)}::text[], ${batch.map((b) => b.n)}::bigint[]) as t(a, p, n)
        on conflict (account_id, period_start, metric) do update set value = account_usage.value + excluded.value`.execute(
        trx,
      );
      const day = now().toISOString().slice(0, 10);
      const appIds: string[] = [];
      const appCounts: number[] = [];
      for (const b of batch) for (const [appId, n] of b.apps) appIds.push(appId), appCounts.push(n);
      await sql`
        insert into usage_counters (app_id, day, metric, value)
        select a, ${day}::date, 'requests', n from unnest(${appIds}::text[], ${appCounts}::bigint[]) as t(a, n)
        on conflict (app_id, day, metric) do update set value = usage_counters.value + excluded.value`.execute(
        trx,
      );
    });
  }

  /**
   * Adds pending counts to the shared totals and reads back the totals of every account this node
   * follows (one flush at a time; a caller during one waits for the next).
   */
  function flush(): Promise<void> {
    const run = (flushing ?? Promise.resolve()).then(flushOnce).finally(() => {
      if (flushing === run) flushing = undefined;
    });
    flushing = run;
    return run;
  }

  /** The shared total of an account first seen here, read in the background (so a quota holds across restarts). */
  async function loadTotal(accountId: string, e: AccountCount): Promise<void> {
    const p = e.period;
    try {
      const row = await options.db
        .selectFrom('account_usage')
        .select('value')
        .where('account_id', '=', accountId)
        .where('period_start', '=', sql<Date>`${p}::date`)
        .where('metric', '=', REQUESTS_METRIC)
        .executeTakeFirst();
      if (e.period === p) e.total = Math.max(e.total, Number(row?.value ?? 0));
    } catch {
      // the next flush brings the total
    }
  }

  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref?.();

  return {
    record,
    used,
    /**
     * Follows an account, resolving once its shared total is known: a node's first request for an
     * account (which loads the app from the database anyway) waits for it, so a new node does not
     * serve past a quota the others used up. Undefined when the account is already followed.
     */
    follow(accountId: string): Promise<void> | undefined {
      if (counts.has(accountId)) return undefined;
      return loads.get(entry(accountId));
    },
    flush,
    /** This node's not yet flushed count for an account (the status record adds it). */
    pending: (accountId: string) => counts.get(accountId)?.pending ?? 0,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}
