/**
 * Host → app for slugs and custom domains, held in memory on every node: the whole table of
 * serving routes (and tombstones from the last 30 days, which answer 410) is loaded once, then
 * each change arrives through the change feed (a trigger on `app_routes` NOTIFYs from the
 * writing transaction) and is re-read for that hostname alone. A full reload runs after the feed
 * reconnects and every few minutes as a safety net. A static hit through an alias therefore
 * costs one Map lookup more than through the canonical origin.
 */
import type { Executor } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { ChangeFeed } from '../changes/feed.ts';
import { servingRoutes, type ServingRouteRow } from './queries.ts';

export type RouteEntry = {
  routeId: string;
  appId: string;
  routeType: 'slug' | 'custom_domain';
  hostname: string;
  status: string;
};

const SAFETY_RELOAD_MS = 5 * 60_000;

export type RouteTable = {
  /** From memory: the entry, null for a hostname with no route, undefined when it must be read first (`lookup`). */
  cached(hostname: string): RouteEntry | null | undefined;
  lookup(hostname: string): Promise<RouteEntry | null>;
  /** This node changed a route: re-read it before its next use (other nodes hear it from the feed). */
  invalidate(hostname: string): void;
  close(): void;
};

/** A serving route beats a tombstone; among tombstones the newest speaks. */
function pick(rows: ServingRouteRow[]): RouteEntry | null {
  const live = rows.find((r) => r.status !== 'deleted');
  const row = live ?? rows.at(-1);
  return row
    ? {
        routeId: row.id,
        appId: row.app_id,
        routeType: row.route_type,
        hostname: row.hostname,
        status: row.status,
      }
    : null;
}

export function createRouteTable(deps: {
  db: Executor;
  log: Logger;
  feed: ChangeFeed;
}): RouteTable {
  let map = new Map<string, RouteEntry>();
  let ready = false;
  let loadingAll: Promise<void> | undefined;
  let seq = 0;
  /** hostname → the change number that made it stale */
  const dirty = new Map<string, number>();
  const loadingOne = new Map<string, Promise<void>>();
  let timer: ReturnType<typeof setInterval> | undefined;

  function loadAll(): Promise<void> {
    loadingAll ??= (async () => {
      const startedAt = seq;
      const rows = await servingRoutes(deps.db);
      const byHost = new Map<string, ServingRouteRow[]>();
      for (const r of rows) byHost.set(r.hostname, [...(byHost.get(r.hostname) ?? []), r]);
      const next = new Map<string, RouteEntry>();
      for (const [host, list] of byHost) {
        const e = pick(list);
        if (e) next.set(host, e);
      }
      map = next;
      ready = true;
      for (const [host, at] of dirty) if (at <= startedAt) dirty.delete(host);
    })().finally(() => {
      loadingAll = undefined;
    });
    return loadingAll;
  }

  function loadOne(hostname: string): Promise<void> {
    let p = loadingOne.get(hostname);
    if (!p) {
      const at = dirty.get(hostname);
      p = servingRoutes(deps.db, hostname)
        .then((rows) => {
          const e = pick(rows);
          if (e) map.set(hostname, e);
          else map.delete(hostname);
          if (dirty.get(hostname) === at) dirty.delete(hostname);
        })
        .finally(() => loadingOne.delete(hostname));
      loadingOne.set(hostname, p);
    }
    return p;
  }

  function invalidate(hostname: string): void {
    dirty.set(hostname, ++seq);
  }

  deps.feed.onChange((change) => {
    if (change.kind === 'route' && typeof change.hostname === 'string') invalidate(change.hostname);
  });
  deps.feed.onResync(() => {
    if (ready)
      void loadAll().catch((err) =>
        deps.log.warn('route table reload failed', { error: (err as Error).message }),
      );
  });

  function start(): void {
    if (timer) return;
    void deps.feed.start();
    timer = setInterval(() => void loadAll().catch(() => {}), SAFETY_RELOAD_MS);
    timer.unref?.();
  }

  return {
    cached(hostname) {
      if (!ready || dirty.has(hostname)) return undefined;
      return map.get(hostname) ?? null;
    },
    async lookup(hostname) {
      start();
      if (!ready) await loadAll();
      // a change may land while it is read: read again until the entry is current
      for (let i = 0; dirty.has(hostname) && i < 3; i++) await loadOne(hostname);
      return map.get(hostname) ?? null;
    },
    invalidate,
    close() {
      if (timer) clearInterval(timer);
    },
  };
}
