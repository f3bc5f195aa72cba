/**
 * What visitors did, counted in memory on the request path and written as daily aggregates.
 * The request meter (src/usage/meter.ts) hands every served request here, once its status is
 * known: one capture point. Each request adds to a few Map counters (traffic by route kind,
 * runtime target, status bucket and bot; normalised path; referrer domain). Every flush
 * (`PLATFORM_ANALYTICS_FLUSH_MS`, when the maps grow large, and at shutdown) adds them to the
 * aggregate tables with additive upserts, so any number of nodes add to the same rows with no
 * coordination. A failed flush merges back and is retried; past a bound the oldest counts are
 * dropped (and logged) rather than memory growing. Nothing here can change what a visitor gets.
 */
import { sql } from 'kysely';
import { isbot } from 'isbot';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { normalisePath, referrerDomain } from './normalise.ts';

export type RouteKind = 'canonical' | 'slug' | 'custom_domain';
export type Target = 'static' | 'server' | 'not_found';
export type Visit = { appId: string; status: number; via: RouteKind; target: Target; pathname: string; host: string; referrer: string | null; userAgent: string | null };

/** Distinct paths kept per app and day on a node; later new paths fold into OTHER_PATH. */
export const PATHS_PER_DAY = 100;
export const OTHER_PATH = '(other)';
export const DIRECT = '(direct)';
/** Keys pending that trigger an early flush, and the most kept while flushes fail. */
const FLUSH_AT_KEYS = 50_000;
const MAX_KEYS = 500_000;
const SEP = '\u0001';

export type AnalyticsCollector = ReturnType<typeof createAnalyticsCollector>;

export function createAnalyticsCollector(options: { db: Db; log: Logger; flushMs: number }) {
  let traffic = new Map<string, number>();
  let paths = new Map<string, number>();
  let referrers = new Map<string, number>();
  /** app+day → paths this node has counted that day (the top-paths cap) */
  const known = new Map<string, Set<string>>();
  const bots = new Map<string, boolean>();
  let day = '';
  let dayAt = 0;
  let flushing: Promise<void> | undefined;
  let closed = false;

  function today(): string {
    const t = Date.now();
    if (t - dayAt > 1000) {
      dayAt = t;
      const d = new Date(t).toISOString().slice(0, 10);
      if (d !== day) known.clear();
      day = d;
    }
    return day;
  }

  function isBot(ua: string | null): boolean {
    if (!ua) return false;
    let b = bots.get(ua);
    if (b === undefined) {
      b = isbot(ua);
      if (bots.size >= 5000) bots.clear();
      bots.set(ua, b);
    }
    return b;
  }

  const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

  /** Counts one served request. Never throws into the caller and never waits. */
  function add(v: Visit): void {
    try {
      const d = today();
      const bucket = v.status >= 500 ? '5xx' : v.status >= 400 ? '4xx' : v.status >= 300 ? '3xx' : '2xx';
      const bot = isBot(v.userAgent);
      const prefix = v.appId + SEP + d + SEP;
      bump(traffic, prefix + v.via + SEP + v.target + SEP + bucket + SEP + (bot ? '1' : '0'));
      if (bot) return;
      let path = normalisePath(v.pathname);
      const appDay = prefix;
      let seen = known.get(appDay);
      if (!seen) known.set(appDay, (seen = new Set()));
      if (!seen.has(path)) {
        if (seen.size >= PATHS_PER_DAY) path = OTHER_PATH;
        else seen.add(path);
      }
      bump(paths, prefix + path);
      bump(referrers, prefix + (v.referrer ? referrerDomain(v.referrer, v.host) : DIRECT));
      if (traffic.size + paths.size + referrers.size >= FLUSH_AT_KEYS) void flush();
    } catch {
      // a capture error never reaches the visitor
    }
  }

  async function write(t: Map<string, number>, p: Map<string, number>, r: Map<string, number>): Promise<void> {
    const split = (m: Map<string, number>) => [...m].map(([k, n]) => [...k.split(SEP), n] as const);
    await options.db.transaction().execute(async (trx) => {
      if (t.size) {
        const rows = split(t);
        await sql`insert into analytics_traffic (app_id, day, route_kind, target, status_bucket, bot, requests)
          select a, d::date, k, g, b, o = '1', n from unnest(${rows.map((x) => x[0])}::text[], ${rows.map((x) => x[1])}::text[], ${rows.map((x) => x[2])}::text[], ${rows.map((x) => x[3])}::text[], ${rows.map((x) => x[4])}::text[], ${rows.map((x) => x[5])}::text[], ${rows.map((x) => x[6])}::bigint[]) as u(a, d, k, g, b, o, n)
          where exists (select 1 from apps where apps.id = u.a)
          on conflict (app_id, day, route_kind, target, status_bucket, bot) do update set requests = analytics_traffic.requests + excluded.requests`.execute(trx);
      }
      for (const [table, column, m] of [['analytics_paths', 'path', p], ['analytics_referrers', 'domain', r]] as const) {
        if (!m.size) continue;
        const rows = split(m);
        await sql`insert into ${sql.table(table)} (app_id, day, ${sql.ref(column)}, requests)
          select a, d::date, x, n from unnest(${rows.map((x) => x[0])}::text[], ${rows.map((x) => x[1])}::text[], ${rows.map((x) => x[2])}::text[], ${rows.map((x) => x[3])}::bigint[]) as u(a, d, x, n)
          where exists (select 1 from apps where apps.id = u.a)
          on conflict (app_id, day, ${sql.ref(column)}) do update set requests = ${sql.table(table)}.requests + excluded.requests`.execute(trx);
      }
    });
  }

  async function flushOnce(): Promise<void> {
    const [t, p, r] = [traffic, paths, referrers];
    if (!t.size && !p.size && !r.size) return;
    traffic = new Map();
    paths = new Map();
    referrers = new Map();
    try {
      await write(t, p, r);
    } catch (err) {
      // merge back for the next flush, within a bound
      for (const [from, into] of [[t, traffic], [p, paths], [r, referrers]] as const) {
        for (const [k, n] of from) if (into.size < MAX_KEYS) into.set(k, (into.get(k) ?? 0) + n);
      }
      options.log.warn('analytics flush failed; counts kept for the next one', { error: (err as Error).message, keys: t.size + p.size + r.size });
    }
  }

  function flush(): Promise<void> {
    flushing ??= flushOnce().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref?.();

  return {
    add,
    flush,
    /** keys waiting for the next flush (tests, benchmarks) */
    pending: () => traffic.size + paths.size + referrers.size,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
