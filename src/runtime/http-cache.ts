/**
 * The shared cache of app origins: a server answer the app marks cacheable (`Cache-Control:
 * s-maxage` or `max-age`, RFC 9111 as a shared cache reads it, through `http-cache-semantics`) is
 * kept in memory and answers the next matching requests without running the app: `Vary`, `Age`,
 * `stale-while-revalidate` (one refresh in the background), `no-cache` from the client. Never an
 * answer that sets cookies, and never for a request carrying the app-user session (or
 * `Authorization`) unless the answer says `public`. Bounded in all and per app; an app's entries
 * are dropped when it changes (publish, rollback, unpublish, secrets) on any node.
 * Every answer that could have come from it says how in `Cache-Status` (RFC 9211). A streamed
 * answer is not kept (it goes out as it is made). App code's Cache API (`caches.default`) uses the
 * same store and rules in namespaces of its own.
 */
import CachePolicy from 'http-cache-semantics';
import { LRUCache } from 'lru-cache';
import { SESSION_COOKIE } from '../app-auth/service.ts';
import type { HeaderReads } from '../http/parsed-headers.ts';
import { REQUEST_ID_HEADER } from '../http/request-id.ts';

/** Larger answers are not kept: one would crowd out many. */
export const MAX_CACHED_ANSWER_BYTES = 1024 * 1024;
const ENTRY_OVERHEAD = 512;
const CACHE_STATUS = 'cache-status';

type Entry = {
  appId: string;
  accountId: string;
  policy: CachePolicy;
  /** which variant of the URL this is: the request's values of the headers the answer varies on */
  variant: string;
  /** the request headers the answer varies on (lower case), and the stored request's values of them */
  varyNames: string[];
  varyValues: (string | null)[];
  /** what the policy said when it was stored: headers to send (without Age), age then, and its freshness */
  headers: Record<string, string>;
  etag: string | undefined;
  ageAtStore: number;
  storedAt: number;
  maxAge: number;
  status: number;
  body: Buffer;
  /** the answer said `public`: it may serve a request that carries credentials */
  public: boolean;
  size: number;
};

type Fwd = 'uri-miss' | 'vary-miss' | 'stale' | 'request';
/** Why the cache did not answer a request (RFC 9211's `fwd`). */
export type CacheMiss = Fwd;
export type CacheLookup =
  | { kind: 'hit'; response: Response; refresh: boolean }
  | { kind: 'miss'; fwd: Fwd };

/** The URL's path and query (the request URL is absolute and normalised). */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start < 0 ? '/' : url.slice(start);
}

/**
 * A request as the policy library reads it: the headers it looks at (request directives,
 * credentials, the ones `names` an answer varies on), from the parsed headers, not a copy of all.
 */
function policyRequest(url: string, reads: HeaderReads, names: readonly string[]) {
  const headers: Record<string, string> = {};
  for (const n of ['cache-control', 'pragma', 'authorization', ...names]) {
    const v = reads.get(n);
    if (v !== null) headers[n] = v;
  }
  return { url: pathOf(url), method: 'GET', headers };
}

/** Whether the request carries credentials a shared cache must not answer for another visitor. */
function credentialed(reads: HeaderReads): boolean {
  if (reads.get('authorization') !== null) return true;
  const cookie = reads.get('cookie');
  return cookie?.includes(`${SESSION_COOKIE}=`) === true;
}

/** The client asks for an answer no cache gave (`Cache-Control: no-cache`/`no-store`, `Pragma: no-cache`). */
function refusesStored(reads: HeaderReads): boolean {
  const cc = reads.get('cache-control');
  const pragma = reads.get('pragma');
  return (
    (cc !== null && /(^|,)\s*no-(cache|store)\s*(,|$)/i.test(cc)) ||
    (pragma !== null && /no-cache/i.test(pragma))
  );
}

function varyNamesOf(vary: string | null): string[] {
  if (!vary) return [];
  return vary
    .toLowerCase()
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)
    .sort();
}

const size = (list: Entry[]) => list.reduce((n, e) => n + e.size, 0);

export type HttpCache = ReturnType<typeof createHttpCache>;
/** Whose answer is kept: the app's and its account's shares count it. */
export type CacheOwner = { appId: string; accountId: string };

export function createHttpCache(options: {
  bytes: number;
  appBytes: number;
  accountBytes: number;
}) {
  const perApp = new Map<string, { bytes: number; keys: Set<string> }>();
  // an account with many apps holds at most its share in all: it cannot crowd out every other
  const perAccount = new Map<string, number>();
  const entries = new LRUCache<string, Entry[]>({
    maxSize: Math.max(1, options.bytes),
    sizeCalculation: (list) => Math.max(1, size(list)),
    dispose: (list, key) => {
      const first = list[0];
      const app = first ? perApp.get(first.appId) : undefined;
      if (!first || !app) return;
      const appId = first.appId;
      app.bytes -= size(list);
      const held = (perAccount.get(first.accountId) ?? 0) - size(list);
      if (held > 0) perAccount.set(first.accountId, held);
      else perAccount.delete(first.accountId);
      app.keys.delete(key);
      if (!app.keys.size) perApp.delete(appId);
    },
  });
  const refreshing = new Set<string>();
  let hits = 0;
  let misses = 0;

  // the URL with its host: the same path may answer differently on a slug or custom domain
  const keyOf = (appId: string, req: Request) => `${appId}\n${req.url}`;

  /**
   * A stored answer for `req`, or why there is none. HEAD is answered from a GET's entry. `count`:
   * false for a look that a full one may follow (the synchronous fast path), so a miss counts once.
   */
  /** A hit's answer: the stored headers with this request's Age, id and Cache-Status. */
  function answer(
    e: Entry,
    req: Request,
    reads: HeaderReads,
    requestId: string,
    age: number,
    refresh: boolean,
  ): CacheLookup {
    hits++;
    // a plain object, as static hits answer: node-server writes it without building Headers.
    // Copied and then set, not spread with more keys after: V8 makes that literal on a slow path
    // that cost a hit more than the rest of its lookup (bench:http-cache).
    const headers: Record<string, string> = Object.assign({}, e.headers);
    headers.age = String(Math.floor(age));
    headers[REQUEST_ID_HEADER] = requestId;
    headers[CACHE_STATUS] = `platform; hit; ttl=${Math.floor(e.maxAge - age)}`;
    const inm = reads.get('if-none-match');
    if (e.etag && inm !== null && etagMatches(inm, e.etag))
      return { kind: 'hit', response: new Response(null, { status: 304, headers }), refresh };
    const body = req.method === 'HEAD' || e.body.byteLength === 0 ? null : e.body;
    return {
      kind: 'hit',
      response: new Response(body as Uint8Array<ArrayBuffer> | null, { status: e.status, headers }),
      refresh,
    };
  }

  function lookup(
    appId: string,
    req: Request,
    reads: HeaderReads,
    requestId: string,
    count = true,
  ): CacheLookup {
    const list = entries.get(keyOf(appId, req));
    let fwd: Fwd = !list?.length ? 'uri-miss' : refusesStored(reads) ? 'request' : 'vary-miss';
    if (fwd === 'vary-miss') {
      const found = lookupIn(list!, req, reads, requestId);
      if (found.kind === 'hit') return found;
      fwd = found.fwd;
    }
    if (count) misses++;
    return { kind: 'miss', fwd };
  }

  /** The first of a URL's entries that answers `req` (no closures: this runs for every hit). */
  function lookupIn(
    list: Entry[],
    req: Request,
    reads: HeaderReads,
    requestId: string,
    explicit = false,
  ): CacheLookup {
    const withCredentials = !explicit && credentialed(reads);
    // no request directives: a fresh entry whose Vary matches answers by the figures the policy gave at storing
    const plain = reads.get('cache-control') === null;
    let fwd: Fwd = 'vary-miss';
    for (const e of list) {
      if (withCredentials && !e.public) {
        fwd = 'request';
        continue;
      }
      if (plain && varyMatches(e, reads)) {
        const age = e.ageAtStore + (Date.now() - e.storedAt) / 1000;
        if (age < e.maxAge) return answer(e, req, reads, requestId, age, false);
      }
      // anything else (stale, stale-while-revalidate, the client's own directives): the policy decides
      const verdict = e.policy.evaluateRequest(policyRequest(req.url, reads, e.varyNames));
      if (!verdict.response || verdict.revalidation?.synchronous) {
        if (fwd === 'vary-miss' && e.policy.stale()) fwd = 'stale';
        continue;
      }
      return answer(e, req, reads, requestId, e.policy.age(), verdict.revalidation !== undefined);
    }
    return { kind: 'miss', fwd };
  }

  /** Marks one background refresh of this request's entry as running; undefined while one already is. */
  function startRefresh(appId: string, req: Request): (() => void) | undefined {
    const key = keyOf(appId, req);
    if (refreshing.has(key)) return undefined;
    refreshing.add(key);
    return () => refreshing.delete(key);
  }

  function put(key: string, entry: Entry): void {
    const { appId, accountId } = entry;
    const old = entries.peek(key) ?? [];
    const list = old.filter((e) => e.variant !== entry.variant);
    list.push(entry);
    const grows = size(list) - size(old);
    // an app or account at its share stores nothing more until its entries age out or are evicted
    if ((perApp.get(appId)?.bytes ?? 0) + grows > options.appBytes) return;
    if ((perAccount.get(accountId) ?? 0) + grows > options.accountBytes) return;
    entries.set(key, list); // the old list is disposed of (its bytes leave the counts)
    if (!entries.has(key)) return;
    const app = perApp.get(appId) ?? { bytes: 0, keys: new Set<string>() };
    app.bytes += size(list);
    app.keys.add(key);
    perApp.set(appId, app);
    perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + size(list));
  }

  /**
   * A buffered server answer to a GET the cache missed: kept when the app marked it cacheable. Says
   * so in `headers` (`Cache-Status`), which go out with the answer either way.
   */
  function offer(
    owner: CacheOwner,
    url: string,
    reads: HeaderReads,
    status: number,
    headers: Record<string, string> | Headers,
    body: string | ArrayBuffer | Uint8Array | null,
    fwd: CacheMiss,
  ): void {
    const set = (v: string) =>
      headers instanceof Headers ? headers.set(CACHE_STATUS, v) : (headers[CACHE_STATUS] = v);
    set(`platform; fwd=${fwd}`);
    // a cookie-setting answer comes as Headers (set-cookie lines apart): never kept
    if (headers instanceof Headers) return;
    // most answers say nothing of freshness, and nothing is kept without it: no policy is built for them
    const cc = headers['cache-control'];
    if (headers.expires === undefined && (cc === undefined || !/max-?age/i.test(cc))) return;
    const size =
      body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (size > MAX_CACHED_ANSWER_BYTES) return;
    const bytes =
      body === null
        ? Buffer.alloc(0)
        : typeof body === 'string'
          ? Buffer.from(body)
          : Buffer.isBuffer(body)
            ? body
            : Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
    const entry = entryFor(owner, url, reads, status, new Headers(headers), false);
    if (!entry) return;
    put(`${owner.appId}\n${url}`, entry(bytes)); // the key keyOf gives
    set(`platform; fwd=${fwd}; stored`);
  }

  /**
   * What to keep of an answer to `url` (the request's headers in `reads`), or undefined when it may
   * not be kept. `explicit`: the app asked (the Cache API), so the credential rule does not apply.
   */
  function entryFor(
    owner: CacheOwner,
    url: string,
    reads: HeaderReads,
    status: number,
    headers: Headers,
    explicit: boolean,
  ): ((body: Buffer) => Entry) | undefined {
    if (headers.has('set-cookie')) return undefined;
    const kept = Object.fromEntries(headers);
    delete kept[REQUEST_ID_HEADER];
    delete kept[CACHE_STATUS];
    const varyNames = varyNamesOf(headers.get('vary'));
    const policy = new CachePolicy(
      policyRequest(url, reads, varyNames),
      { status, headers: kept },
      { shared: true, cacheHeuristic: 0, immutableMinTimeToLive: 0 },
    );
    const isPublic = /(^|,)\s*public\s*(,|$)/i.test(headers.get('cache-control') ?? '');
    if (!policy.storable() || policy.timeToLive() <= 0) return undefined;
    if (!explicit && credentialed(reads) && !isPublic) return undefined;
    const varyValues = varyNames.map((n) => reads.get(n));
    const sent: Record<string, string> = {};
    // Age says how old the answer is; Date is the server's own, which Node writes cheaply (a
    // stored one measurably slows every hit: bench:http-cache)
    for (const [n, v] of Object.entries(policy.responseHeaders()))
      if (typeof v === 'string' && n !== 'age' && n !== 'date') sent[n] = v;
    return (body) => ({
      appId: owner.appId,
      accountId: owner.accountId,
      policy,
      variant: JSON.stringify([varyNames, varyValues]),
      varyNames,
      varyValues,
      headers: sent,
      etag: sent.etag,
      ageAtStore: policy.age(),
      storedAt: Date.now(),
      maxAge: policy.maxAge(),
      status,
      body,
      public: isPublic || explicit,
      size: body.byteLength + ENTRY_OVERHEAD,
    });
  }

  // The Cache API of app code (`caches.default`, `caches.open(name)`): the same store and rules,
  // in a namespace of the app's own per cache name, filled only by `put`.
  const apiKey = (appId: string, cache: string, url: string) => `${appId}\ncache:${cache}\n${url}`;

  /** `cache.put(request, response)`: kept at once (false when its headers forbid it or it is too large). */
  function apiPut(
    owner: CacheOwner,
    cache: string,
    url: string,
    reads: HeaderReads,
    status: number,
    headers: Headers,
    body: Buffer,
  ): boolean {
    if (body.byteLength > MAX_CACHED_ANSWER_BYTES) return false;
    const entry = entryFor(owner, url, reads, status, headers, true);
    if (!entry) return false;
    const key = apiKey(owner.appId, cache, url);
    put(key, entry(body));
    return entries.peek(key)?.some((e) => e.body === body) === true;
  }

  /** `cache.match(request)`: the kept answer, or undefined. */
  function apiMatch(
    appId: string,
    cache: string,
    req: Request,
    reads: HeaderReads,
    requestId: string,
  ): Response | undefined {
    const list = entries.get(apiKey(appId, cache, req.url));
    if (!list?.length) return undefined;
    const found = lookupIn(list, req, reads, requestId, true);
    return found.kind === 'hit' ? found.response : undefined;
  }

  /** `cache.delete(request)`: whether something was kept for that URL. */
  function apiDelete(appId: string, cache: string, url: string): boolean {
    return entries.delete(apiKey(appId, cache, url));
  }

  /** Drops every answer kept for an app. */
  function purge(appId: string): void {
    const app = perApp.get(appId);
    if (!app) return;
    for (const key of [...app.keys]) entries.delete(key);
    perApp.delete(appId);
  }

  return {
    lookup,
    offer,
    purge,
    api: { put: apiPut, match: apiMatch, delete: apiDelete },
    startRefresh,
    stats: () => ({ bytes: entries.calculatedSize, entries: entries.size, hits, misses }),
  };
}

function varyMatches(e: Entry, reads: HeaderReads): boolean {
  for (let i = 0; i < e.varyNames.length; i++)
    if (reads.get(e.varyNames[i]!) !== e.varyValues[i]) return false;
  return true;
}

function etagMatches(ifNoneMatch: string, etag: string): boolean {
  for (const t of ifNoneMatch.split(',')) {
    const tag = t.trim();
    if (tag === etag || tag === '*') return true;
  }
  return false;
}
