/**
 * What visitors did, counted in memory on the request path and written as daily aggregates.
 * The request meter (src/usage/meter.ts) hands every served request here, once its status is
 * known: one capture point. Each request adds to a few Map counters (traffic by route kind,
 * runtime target, status bucket and bot; normalised path; referrer domain). Every flush
 * (`PLATFORM_ANALYTICS_FLUSH_MS`, when the maps grow large, and at shutdown) adds them to the
 * aggregate tables with additive upserts, so any number of nodes add to the same rows with no
 * coordination. A failed flush merges back and is retried; past a bound the oldest counts are
 * dropped (and logged) rather than memory growing. A chunk the database refuses for good (a data
 * or constraint error) is written row by row, and only a row refused alone is dropped (logged).
 * Nothing here can change what a visitor gets.
 */
import { sql } from 'kysely';
import { isbot } from 'isbot';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { normalisePath, referrerDomain } from './normalise.ts';
import { refusedForGood } from '../db/pg-errors.ts';

export type RouteKind = 'canonical' | 'slug' | 'custom_domain';
export type Target = 'static' | 'server' | 'not_found';
export type Visit = {
  appId: string;
  status: number;
  via: RouteKind;
  target: Target;
  pathname: string;
  host: string;
  referrer: string | null;
  userAgent: string | null;
};

/** Distinct paths kept per app and day on a node; later new paths fold into OTHER_PATH. */
export const PATHS_PER_DAY = 100;
export const OTHER_PATH = '(other)';
export const DIRECT = '(direct)';
/** Keys pending that trigger an early flush, and the most kept while flushes fail. */
const FLUSH_AT_KEYS = 50_000;
const MAX_KEYS = 500_000;
/** Keys per upsert statement, and statements in flight at once during a flush. */
const CHUNK = 5000;
const PARALLEL = 4;

export type AnalyticsCollector = ReturnType<typeof createAnalyticsCollector>;

const VIAS: readonly RouteKind[] = ['canonical', 'slug', 'custom_domain'];
const TARGETS: readonly Target[] = ['static', 'server', 'not_found'];
const BUCKETS = ['2xx', '3xx', '4xx', '5xx'] as const;
const VIA_INDEX: Record<RouteKind, number> = { canonical: 0, slug: 1, custom_domain: 2 };
const TARGET_INDEX: Record<Target, number> = { static: 0, server: 1, not_found: 2 };
const SLOTS = VIAS.length * TARGETS.length * BUCKETS.length * 2;

/**
 * One app's counts for one UTC day on this node: traffic in a fixed array indexed by
 * (route kind, target, status bucket, bot), paths and referrers in Maps. The request path does a
 * Map lookup by app id (the same string object every time, so its hash is cached) and array
 * arithmetic: no key strings are built per request.
 */
type AppDay = {
  appId: string;
  day: string;
  traffic: Float64Array;
  paths: Map<string, number>;
  referrers: Map<string, number>;
};
type Row = {
  table: 'analytics_traffic' | 'analytics_paths' | 'analytics_referrers';
  appId: string;
  day: string;
  key: string;
  n: number;
};

export function createAnalyticsCollector(options: { db: Db; log: Logger; flushMs: number }) {
  /** today's counts by app; counts of an earlier day wait in `older` until the next flush */
  let current = new Map<string, AppDay>();
  let older: AppDay[] = [];
  let keys = 0;
  /** app → the paths this node has counted today (the top-paths cap) */
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

  function appDay(appId: string, d: string): AppDay {
    let e = current.get(appId);
    if (e && e.day === d) return e;
    if (e) older.push(e);
    e = { appId, day: d, traffic: new Float64Array(SLOTS), paths: new Map(), referrers: new Map() };
    current.set(appId, e);
    return e;
  }

  function bump(m: Map<string, number>, key: string, n: number): void {
    const v = m.get(key);
    if (v === undefined) keys++;
    m.set(key, (v ?? 0) + n);
  }

  /** Counts one served request. Never throws into the caller and never waits. */
  function add(v: Visit): void {
    try {
      const e = appDay(v.appId, today());
      const status = v.status;
      const bucket = status >= 500 ? 3 : status >= 400 ? 2 : status >= 300 ? 1 : 0;
      const bot = isBot(v.userAgent);
      const slot =
        ((VIA_INDEX[v.via] * 3 + TARGET_INDEX[v.target]) * 4 + bucket) * 2 + (bot ? 1 : 0);
      if (e.traffic[slot] === 0) keys++;
      e.traffic[slot]! += 1;
      if (bot) return;
      let path = normalisePath(v.pathname);
      let seen = known.get(v.appId);
      if (!seen) known.set(v.appId, (seen = new Set()));
      if (!seen.has(path)) {
        if (seen.size >= PATHS_PER_DAY) path = OTHER_PATH;
        else seen.add(path);
      }
      bump(e.paths, path, 1);
      bump(e.referrers, v.referrer ? referrerDomain(v.referrer, v.host) : DIRECT, 1);
      if (keys >= FLUSH_AT_KEYS) void flush();
    } catch {
      // a capture error never reaches the visitor
    }
  }

  /** Puts rows of a failed write back, within the bound. */
  function mergeBack(rows: Row[]): void {
    for (const r of rows) {
      if (keys >= MAX_KEYS) return;
      // back into the one entry for its app and day, so a later flush writes each key once
      let e = r.day === today() ? appDay(r.appId, r.day) : current.get(r.appId);
      if (!e || e.day !== r.day) {
        e = older.find((o) => o.appId === r.appId && o.day === r.day);
        if (!e)
          older.push(
            (e = {
              appId: r.appId,
              day: r.day,
              traffic: new Float64Array(SLOTS),
              paths: new Map(),
              referrers: new Map(),
            }),
          );
      }
      if (r.table === 'analytics_traffic') {
        const slot = Number(r.key);
        if (e.traffic[slot] === 0) keys++;
        e.traffic[slot]! += r.n;
      } else bump(r.table === 'analytics_paths' ? e.paths : e.referrers, r.key, r.n);
    }
  }

  function rowsOf(days: AppDay[]): Row[][] {
    const traffic: Row[] = [];
    const paths: Row[] = [];
    const referrers: Row[] = [];
    for (const e of days) {
      e.traffic.forEach((n, slot) => {
        if (n > 0)
          traffic.push({
            table: 'analytics_traffic',
            appId: e.appId,
            day: e.day,
            key: String(slot),
            n,
          });
      });
      for (const [key, n] of e.paths)
        paths.push({ table: 'analytics_paths', appId: e.appId, day: e.day, key, n });
      for (const [key, n] of e.referrers)
        referrers.push({ table: 'analytics_referrers', appId: e.appId, day: e.day, key, n });
    }
    return [traffic, paths, referrers];
  }

  /** One additive upsert of a chunk of rows of one table (its own statement: a failure affects that chunk alone). */
  async function writeChunk(rows: Row[]): Promise<void> {
    const table = rows[0]!.table;
    const apps = rows.map((r) => r.appId);
    const days = rows.map((r) => r.day);
    const counts = rows.map((r) => r.n);
    if (table === 'analytics_traffic') {
      const dims = rows.map((r) => {
        const slot = Number(r.key);
        const bot = slot % 2;
        const bucket = Math.floor(slot / 2) % 4;
        const target = Math.floor(slot / 8) % 3;
        const via = Math.floor(slot / 24);
        return [VIAS[via]!, TARGETS[target]!, BUCKETS[bucket]!, bot === 1] as const;
      });
      await sql`insert into analytics_traffic (app_id, day, route_kind, target, status_bucket, bot, requests)
        select a, d::date, k, g, b, o, n from unnest(${apps}::text[], ${days}::text[], ${dims.map((x) => x[0])}::text[], ${dims.map((x) => x[1])}::text[], ${dims.map((x) => x[2])}::text[], ${dims.map((x) => x[3])}::boolean[], ${counts}::bigint[]) as u(a, d, k, g, b, o, n)
        where exists (select 1 from apps where apps.id = u.a)
        on conflict (app_id, day, route_kind, target, status_bucket, bot) do update set requests = analytics_traffic.requests + excluded.requests`.execute(
        options.db,
      );
      return;
    }
    const column = table === 'analytics_paths' ? 'path' : 'domain';
    await sql`insert into ${sql.table(table)} (app_id, day, ${sql.ref(column)}, requests)
      select a, d::date, x, n from unnest(${apps}::text[], ${days}::text[], ${rows.map((r) => r.key)}::text[], ${counts}::bigint[]) as u(a, d, x, n)
      where exists (select 1 from apps where apps.id = u.a)
      on conflict (app_id, day, ${sql.ref(column)}) do update set requests = ${sql.table(table)}.requests + excluded.requests`.execute(
      options.db,
    );
  }

  /**
   * Each row of a refused chunk alone; a row the database can never take (a data or constraint
   * error) is dropped and logged instead of holding back the rest of its chunk at every flush.
   * Returns the rows to keep for the next flush (the database was away).
   */
  async function writeEach(rows: Row[]): Promise<Row[]> {
    const kept: Row[] = [];
    for (const row of rows) {
      try {
        await writeChunk([row]);
      } catch (err) {
        if (refusedForGood(err))
          options.log.error('an analytics count was refused by the database and dropped', {
            app_id: row.appId,
            table: row.table,
            code: (err as { code?: string }).code,
            error: String(err),
          });
        else kept.push(row);
      }
    }
    return kept;
  }

  async function flushOnce(): Promise<void> {
    if (!current.size && !older.length) return;
    const days = [...current.values(), ...older];
    current = new Map();
    older = [];
    keys = 0;
    const chunks: Row[][] = [];
    for (const rows of rowsOf(days))
      for (let i = 0; i < rows.length; i += CHUNK) chunks.push(rows.slice(i, i + CHUNK));
    // a few chunks at a time, on separate connections; a failed chunk merges back (the others are in: nothing doubles)
    let failed = 0;
    let error: unknown;
    let next = 0;
    const worker = async () => {
      for (let c = chunks[next++]; c; c = chunks[next++]) {
        try {
          await writeChunk(c);
        } catch (err) {
          // a chunk the database refuses for good is written row by row: only a row refused alone is lost
          const kept = refusedForGood(err) ? await writeEach(c) : c;
          if (!kept.length) continue;
          failed += kept.length;
          error = err;
          mergeBack(kept);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, chunks.length) }, worker));
    if (failed)
      options.log.warn(
        'analytics flush failed for part of the counts; they are kept for the next one',
        { error: (error as Error)?.message, keys: failed },
      );
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
    pending: () => keys,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
