/**
 * App origins: `<app_id>.<apps host>`. Routing order is the contract's: reserved
 * `/_platform/*`, a static file under `runtime.static_root`, a directory's `index.html`,
 * then the fallback (`server`, `index.html` or `404`). Static hits are answered from memory.
 */
import { DEFAULT_INSTANCE_LIMITS } from '../sandbox/protocol.ts';
import { appOrigin } from '../apps/mappers.ts';
import type { ModuleCheck } from '../apps/module-check.ts';
import type { Deps } from '../deps.ts';
import { REQUEST_ID_HEADER, requestIdFor } from '../http/request-id.ts';
import { headerReads, type HeaderReads, type NodeIncoming } from '../http/parsed-headers.ts';
import {
  createRuntimeCaches,
  type LiveApp,
  type ReleaseFile,
  type RuntimeCaches,
} from '../releases/live.ts';
import { directStaticFile } from './assets.ts';
import { decodeAppPath } from './paths.ts';
import { SandboxPool } from '../sandbox/pool.ts';
import type { PoolStats } from '../sandbox/pool-stats.ts';
import { runServerFallback } from './server-fallback.ts';
import { instanceFlags } from './invoke.ts';
import { representation, serveFile, STATIC_CACHE_CONTROL, staticStatus } from './static.ts';
import { platformRoutes } from './platform/router.ts';
import { noindex, previewGate } from './preview-gate.ts';
import { createDevMode, DEV_PATH, isDocumentRequest } from './dev-mode.ts';
import { type CacheMiss, createHttpCache, type HttpCache } from './http-cache.ts';
import { notPublished, originBlocked, originError, originFail, originJson } from './respond.ts';
import { createRequestMeter, REQUESTS_METRIC, type RequestMeter } from '../usage/meter.ts';
import { createEventWriter, type EventWriter } from '../events/writer.ts';
import { createBodyBudget } from '../http/body-budget.ts';
import { errorBody } from '../errors.ts';
import { largestCpuMs, planOf } from '../plans/catalogue.ts';
import { createChangeFeed, type ChangeFeed } from '../changes/feed.ts';
import { createRouteTable, type RouteEntry, type RouteTable } from '../domains/table.ts';
import {
  createAnalyticsCollector,
  type AnalyticsCollector,
  type RouteKind,
  type Target,
} from '../analytics/collector.ts';

export type AppsPlane = {
  /**
   * Answers a request for an app origin; `appId` is the host's label, `client` the peer address,
   * `incoming` Node's request where the server has it: its parsed headers and its body are read
   * instead of the Request's (http/parsed-headers.ts). Never throws.
   */
  handle(
    req: Request,
    appId: string,
    client?: string,
    incoming?: NodeIncoming,
  ): Response | Promise<Response>;
  /** Answers a request whose Host is a slug or custom domain (`hostname` normalised): the app it routes to, or why not. */
  handleAlias(
    req: Request,
    hostname: string,
    client?: string,
    incoming?: NodeIncoming,
  ): Response | Promise<Response>;
  /** Answers a request for a release's preview origin (`<app_id>--<release token>`): a grant opens it. */
  handlePreview(
    req: Request,
    target: { appId: string; releaseId: string },
    client?: string,
    incoming?: NodeIncoming,
  ): Promise<Response>;
  /** Host → app for slugs and custom domains (kept current across nodes by `feed`). */
  routes: RouteTable;
  /** Changes committed by any node (LISTEN/NOTIFY). */
  feed: ChangeFeed;
  caches: RuntimeCaches;
  sandbox(): SandboxPool;
  /** the pool's figures, or null while no server call has started it (reading never starts it) */
  sandboxStats(): PoolStats | null;
  /** Counts what app origins serve for the monthly quotas (fed by the same capture as `analytics`). */
  meter: RequestMeter;
  /** Counts what visitors did for app analytics (daily aggregates). */
  analytics: AnalyticsCollector;
  /** Writes server requests' runtime events in batches, after the answers (flushed at close). */
  events: EventWriter;
  /** Loads a server module from a bundle's sources in the sandbox: ok, or why it does not load. */
  checkModule: ModuleCheck;
  /** The shared cache of answers apps mark cacheable (absent when turned off). */
  httpCache: HttpCache | undefined;
  /** Ends answers that stay open by design (dev mode's event streams), so the HTTP server can close. */
  endStreams(): void;
  close(): Promise<void>;
};

/** Path and query of an absolute URL without a full parse (the URL is already normalised by the server). */
function splitUrl(url: string): { pathname: string; search: string } {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return { pathname: '/', search: '' };
  const hash = url.indexOf('#', start);
  const end = hash < 0 ? url.length : hash;
  const q = url.indexOf('?', start);
  return q < 0 || q > end
    ? { pathname: url.slice(start, end), search: '' }
    : { pathname: url.slice(start, q), search: url.slice(q, end) };
}

export function createAppsPlane(deps: Deps): AppsPlane {
  const caches = createRuntimeCaches(deps);
  let pool: SandboxPool | undefined;
  const sandbox = () =>
    (pool ??= new SandboxPool({
      workers: deps.config.sandbox.workers,
      // each call runs with its account plan's server.cpu_ms.max (invoke.ts); Free's is the default
      limits: {
        cpuMs: deps.config.plans.free.limits['server.cpu_ms.max'],
        memoryBytes: deps.config.sandbox.memoryBytes,
        stackBytes: DEFAULT_INSTANCE_LIMITS.stackBytes,
        wallMs: deps.config.sandbox.wallMs,
      },
      hardKillMs: Math.max(1000, largestCpuMs(deps.config.plans) * 3),
      workerMemoryBytes: deps.config.sandbox.workerMemoryBytes,
      ...(deps.config.sandbox.instanceBudgetBytes
        ? { instanceBudgetBytes: deps.config.sandbox.instanceBudgetBytes }
        : {}),
      onWorkerExit: (info) => deps.log.warn('sandbox worker replaced', info),
      // app code may fetch public addresses (and what the operator allows), never this platform's own hosts
      fetchPolicy: {
        allow: [...deps.config.sandbox.fetchAllow],
        denyHosts: Object.values(deps.config.hosts),
        dnsServers: [...deps.config.domains.dnsServers],
      },
    }));

  const feed = createChangeFeed(deps);
  const routes = createRouteTable({ db: deps.db, log: deps.log, feed });
  deps.signals.onRouteChanged((hostname) => routes.invalidate(hostname));
  // what other nodes changed reaches this node's caches as if it had changed it here
  feed.onChange((change) => {
    const id = typeof change.id === 'string' ? change.id : undefined;
    if (!id) return;
    if (change.kind === 'app') deps.signals.appChanged(id);
    else if (change.kind === 'secrets') deps.signals.secretsChanged(id);
    else if (change.kind === 'account') deps.signals.accountChanged(id);
  });
  // messages sent while the feed was away are lost: forget every cached pointer and secret
  feed.onResync(() => caches.forgetLive());
  let feedStarted = false;
  const startFeed = () => {
    feedStarted = true;
    void feed.start();
  };

  const meter = createRequestMeter({
    db: deps.db,
    log: deps.log,
    flushMs: deps.config.usageFlushMs,
  });
  const analytics = createAnalyticsCollector({
    db: deps.db,
    log: deps.log,
    flushMs: deps.config.analyticsFlushMs,
  });
  const appsSuffix = `.${deps.config.hosts.apps}`;

  /** The one capture point: every request an app origin serves, once its status is known (quota and analytics). */
  function capture(
    h: HeaderReads,
    app: LiveApp,
    status: number,
    via: RouteKind,
    host: string | null,
    target: Target,
    pathname: string,
  ): void {
    meter.record({ accountId: app.accountId, appId: app.appId, status });
    const referrer = h.get('referer');
    // the host only matters to tell a self-referral: built only when there is a referrer
    analytics.add({
      appId: app.appId,
      status,
      via,
      target,
      pathname,
      host: referrer ? (host ?? app.appId + appsSuffix) : '',
      referrer,
      userAgent: h.get('user-agent'),
    });
  }
  const events = createEventWriter({ db: deps.db, log: deps.log });
  const dev = deps.config.devMode ? createDevMode(deps, caches) : undefined;
  const httpCache =
    deps.config.httpCache.bytes > 0 ? createHttpCache(deps.config.httpCache) : undefined;
  if (httpCache) {
    // what an app answered before a publish, rollback, unpublish or secret change is not its answer now
    deps.signals.onAppChanged((id) => httpCache.purge(id));
    deps.signals.onSecretsChanged((id) => httpCache.purge(id));
  }
  const bodies = createBodyBudget();
  const plans = deps.config.plans;

  /** The account has used its monthly requests (from memory). */
  const overQuota = (app: LiveApp) => meter.used(app.accountId) >= app.monthlyRequests;

  /** Why an app may not answer at all right now (operator flags, the monthly quota): from memory only. */
  function refusal(app: LiveApp, requestId: string): Response | undefined {
    if (app.block) return originBlocked(app.block, requestId);
    if (!overQuota(app)) return undefined;
    const details = {
      metric: REQUESTS_METRIC,
      plan_key: app.planKey,
      limit: app.monthlyRequests,
      current: meter.used(app.accountId),
      increment: 1,
      upgrade_required: true,
    };
    return originJson(
      402,
      errorBody(
        'quota_exceeded',
        "This app's account has used its monthly requests; it serves again next month or after an upgrade.",
        details,
      ),
      requestId,
      { 'cache-control': 'no-store' },
    );
  }

  /** The client accepts none of the encodings the file exists in (`identity;q=0`). */
  function notAcceptable(requestId: string): Response {
    return originJson(
      406,
      errorBody(
        'not_acceptable',
        'This file is not available in an encoding your Accept-Encoding allows.',
      ),
      requestId,
      { vary: 'accept-encoding' },
    );
  }

  async function serve(
    req: Request,
    reads: HeaderReads,
    app: LiveApp,
    f: ReleaseFile,
    status: number,
    requestId: string,
  ): Promise<Response> {
    const rep = representation(reads, f);
    if (!rep) return notAcceptable(requestId);
    return serveFile(
      req,
      rep,
      req.method === 'HEAD' ? null : await caches.body(app.accountId, rep.blob),
      status,
      requestId,
      staticStatus(reads, rep, status),
    );
  }

  // A plain function, not a Hono router, with no per-request closures: this is the hottest path.
  async function route(
    req: Request,
    reads: HeaderReads,
    appId: string,
    requestId: string,
    client: string,
    via: RouteKind,
    host: string | null,
  ): Promise<Response> {
    const app = await caches.liveApp(appId);
    if (!app) return notPublished(req, requestId);
    const following = meter.follow(app.accountId);
    if (following) await following;
    const refused = refusal(app, requestId);
    if (refused) return refused;
    const { pathname, search } = splitUrl(req.url);
    if (dev && pathname.startsWith(DEV_PATH)) {
      const answer = dev.answer(req, pathname, app.appId, requestId);
      if (answer) return answer;
    }
    const page = dev !== undefined && isDocumentRequest(req);
    if (page) {
      req = dev.documentRequest(req);
      reads = headerReads(req, undefined);
    }
    const served: { target: Target } = { target: 'static' };
    let res = await routeLive(req, reads, app, requestId, client, pathname, search, served);
    if (page) res = dev.decorate(res, app.releaseId);
    const status = res.status;
    capture(
      reads,
      app,
      status,
      via,
      host,
      status === 404 && served.target === 'static' ? 'not_found' : served.target,
      pathname,
    );
    return res;
  }

  async function routeLive(
    req: Request,
    reads: HeaderReads,
    app: LiveApp,
    requestId: string,
    client: string,
    pathname: string,
    search: string,
    served: { target: Target },
  ): Promise<Response> {
    const release = await caches.release(app.releaseId);
    if (!release) return originFail('not_found', 'No app is published at this address.', requestId);

    const path = decodeAppPath(pathname);
    if (!path) return originFail('not_found', 'Not found.', requestId);
    if (path.segments[0] === '_platform') {
      served.target = 'server';
      return platformRoutes.fetch(req, {
        deps,
        caches,
        sandbox,
        httpCache,
        app,
        release,
        requestId,
        client,
      });
    }

    const { runtime } = release.manifest;
    const root = release.staticRoot;
    const files = release.files;
    const rel = path.segments.join('/');
    const readable = req.method === 'GET' || req.method === 'HEAD';

    if (readable) {
      const direct = directStaticFile(release, pathname);
      if (direct) return serve(req, reads, app, direct, 200, requestId);
      // `/dir` names a directory with an index.html: redirect to `/dir/`.
      if (root !== null && rel && !path.directory && files.has(`${root}/${rel}/index.html`)) {
        return new Response(null, {
          status: 301,
          headers: {
            location: `${pathname}/${search}`,
            'cache-control': STATIC_CACHE_CONTROL,
            [REQUEST_ID_HEADER]: requestId,
          },
        });
      }
    }
    const fallback = runtime.fallback ?? '404';
    if (fallback === 'server') {
      served.target = 'server';
      const run = (r: Request, id: string, cacheMiss?: CacheMiss) =>
        runServerFallback(
          deps,
          { caches, sandbox, events, bodies, httpCache },
          {
            req: r,
            app,
            release,
            origin: appOrigin(deps.config, app.appId),
            requestId: id,
            reads,
            cacheMiss,
          },
        );
      if (!httpCache || !readable) return run(req, requestId);
      const found = httpCache.lookup(app.appId, req, reads, requestId);
      // a HEAD is answered from a GET's entry, never kept (it has no body)
      if (found.kind === 'miss')
        return run(req, requestId, req.method === 'GET' ? found.fwd : undefined);
      if (found.refresh) refreshInBackground(app.appId, req, run);
      return found.response;
    }
    if (!readable)
      return originFail('method_not_allowed', `${req.method} is not allowed here.`, requestId, {
        allow: 'GET, HEAD',
      });
    const rootIndex =
      fallback === 'index.html' && root !== null ? files.get(`${root}/index.html`) : undefined;
    if (rootIndex) return serve(req, reads, app, rootIndex, 200, requestId);
    const page404 = root === null ? undefined : files.get(`${root}/404.html`);
    if (page404) return serve(req, reads, app, page404, 404, requestId);
    return originFail('not_found', 'Not found.', requestId);
  }

  /** `stale-while-revalidate`: one request runs the app again after the stale answer went out. */
  function refreshInBackground(
    appId: string,
    req: Request,
    run: (r: Request, requestId: string, cacheMiss: CacheMiss) => Promise<Response>,
  ): void {
    const done = httpCache?.startRefresh(appId, req);
    if (!done) return;
    void run(req, requestIdFor(null), 'stale')
      // the new answer was kept as it was made; nobody waits for its body
      .then((res) => res.body?.cancel())
      .catch((err) =>
        deps.log.warn('background refresh failed', { app_id: appId, error: String(err) }),
      )
      .finally(done);
  }

  /**
   * An answer from memory, given synchronously (no promise for node-server to await): a static file
   * whose bytes are cached, or a fresh answer of the shared cache, for an app and release in memory.
   * Anything else (a stale entry, whose refresh needs the full path, too) returns undefined and
   * takes the full path.
   */
  function fromMemory(
    req: Request,
    reads: HeaderReads,
    appId: string,
    requestId: string,
    via: RouteKind,
    host: string | null,
  ): Response | undefined {
    const method = req.method;
    if ((method !== 'GET' && method !== 'HEAD') || dev) return undefined;
    const app = caches.liveAppCached(appId);
    if (!app || app.block !== null || overQuota(app)) return undefined;
    const release = caches.releaseCached(app.releaseId);
    if (!release) return undefined;
    const pathname = splitUrl(req.url).pathname;
    const f = directStaticFile(release, pathname);
    if (f) {
      const rep = representation(reads, f);
      if (!rep) return undefined;
      const bytes = method === 'HEAD' ? null : caches.bytesCached(rep.blob);
      if (bytes === undefined) return undefined;
      const status = staticStatus(reads, rep, 200);
      capture(reads, app, status, via, host, 'static', pathname);
      return serveFile(req, rep, bytes, 200, requestId, status);
    }
    if (!httpCache || release.manifest.runtime.fallback !== 'server') return undefined;
    // an entry exists only for a URL this release answered from its server code (purged on publish)
    const found = httpCache.lookup(app.appId, req, reads, requestId, false);
    if (found.kind !== 'hit' || found.refresh) return undefined;
    capture(reads, app, found.response.status, via, host, 'server', pathname);
    return found.response;
  }

  function handle(
    req: Request,
    appId: string,
    client = 'unknown',
    incoming?: NodeIncoming,
  ): Response | Promise<Response> {
    if (!feedStarted) startFeed();
    const reads = headerReads(req, incoming);
    const requestId = requestIdFor(reads.get(REQUEST_ID_HEADER));
    try {
      const fast = fromMemory(req, reads, appId, requestId, 'canonical', null);
      if (fast) return fast;
    } catch {
      // fall through to the full path, which reports errors properly
    }
    return handleSlow(req, reads, appId, requestId, client, 'canonical', null);
  }

  async function handleSlow(
    req: Request,
    reads: HeaderReads,
    appId: string,
    requestId: string,
    client: string,
    via: RouteKind,
    host: string | null,
  ): Promise<Response> {
    try {
      // Every response route() builds carries the request id already (set at construction).
      return await route(req, reads, appId, requestId, client, via, host);
    } catch (err) {
      return originError(deps, err, requestId, { app_id: appId });
    }
  }

  /** 404 for a pending or disabled alias, 410 for a removed one; app code never runs. */
  function routeDisabled(entry: RouteEntry, requestId: string): Response {
    const kind = entry.routeType === 'slug' ? 'slug' : 'custom domain';
    const why =
      entry.status === 'deleted'
        ? `This ${kind} was removed from its app.`
        : entry.status === 'pending_dns'
          ? `This ${kind} is waiting for DNS verification.`
          : `This ${kind} is disabled${entry.status === 'disabled_downgrade' ? ' by a plan change' : entry.status === 'disabled_billing' ? ' while a payment is overdue' : ''}.`;
    const details = {
      route_id: entry.routeId,
      route_type: entry.routeType,
      hostname: entry.hostname,
      status: entry.status,
    };
    return originJson(
      entry.status === 'deleted' ? 410 : 404,
      errorBody('route_disabled', why, details),
      requestId,
      { 'cache-control': 'no-store' },
    );
  }

  function serveAlias(
    req: Request,
    reads: HeaderReads,
    hostname: string,
    entry: RouteEntry | null,
    requestId: string,
    client: string,
  ): Response | Promise<Response> {
    if (!entry)
      return originFail(
        'not_found',
        hostname.endsWith(`.${deps.config.hosts.apps}`)
          ? 'No app is published at this address.'
          : 'Unknown host.',
        requestId,
      );
    if (entry.status !== 'active') return routeDisabled(entry, requestId);
    try {
      const fast = fromMemory(req, reads, entry.appId, requestId, entry.routeType, hostname);
      if (fast) return fast;
    } catch {
      // the full path reports errors properly
    }
    return handleSlow(req, reads, entry.appId, requestId, client, entry.routeType, hostname);
  }

  function handleAlias(
    req: Request,
    hostname: string,
    client = 'unknown',
    incoming?: NodeIncoming,
  ): Response | Promise<Response> {
    if (!feedStarted) startFeed();
    const reads = headerReads(req, incoming);
    const requestId = requestIdFor(reads.get(REQUEST_ID_HEADER));
    const entry = routes.cached(hostname);
    if (entry !== undefined) return serveAlias(req, reads, hostname, entry, requestId, client);
    return routes.lookup(hostname).then(
      (found) => serveAlias(req, reads, hostname, found, requestId, client),
      (err) => originError(deps, err, requestId),
    );
  }

  /**
   * A preview is served as its app would be with the preview in the live pointer's place: the same
   * routing, limits and blocks; its requests count toward the monthly quota but not the app's analytics.
   */
  async function handlePreview(
    req: Request,
    target: { appId: string; releaseId: string },
    client = 'unknown',
    incoming?: NodeIncoming,
  ): Promise<Response> {
    if (!feedStarted) startFeed();
    const reads = headerReads(req, incoming);
    const requestId = requestIdFor(reads.get(REQUEST_ID_HEADER));
    try {
      const { pathname, search } = splitUrl(req.url);
      const door = previewGate(deps, req, target, pathname, requestId);
      if (door) return door;
      const app = await caches.previewApp(target.appId, target.releaseId);
      if (!app)
        return noindex(
          originFail('not_found', 'There is no preview of this release to serve.', requestId),
        );
      const refused = refusal(app, requestId);
      if (refused) return noindex(refused);
      const res = await routeLive(req, reads, app, requestId, client, pathname, search, {
        target: 'static',
      });
      meter.record({ accountId: app.accountId, appId: app.appId, status: res.status });
      return noindex(res);
    } catch (err) {
      return noindex(originError(deps, err, requestId, { app_id: target.appId }));
    }
  }

  const checkModule: ModuleCheck = async (input) => {
    const keep = input.keepAs;
    const checkId = keep?.releaseId ?? `check_${crypto.randomUUID()}`;
    const result = await sandbox().invoke({
      handler: 'load',
      // a kept instance is set up as the release's own calls set theirs up
      ...(keep ? { flags: instanceFlags(deps, keep) } : {}),
      app: {
        app_id: input.appId,
        origin: appOrigin(deps.config, input.appId),
        release_id: checkId,
      },
      release: { releaseId: checkId, entry: input.entry },
      loadSources: async () => input.sources,
      limits: { cpuMs: planOf(plans, input.planKey).limits['server.cpu_ms.max'] },
      request: { method: 'GET', url: appOrigin(deps.config, input.appId), headers: [] },
      secrets: keep ? await caches.appSecrets(input.appId) : {},
    });
    if (!keep || !result.ok) sandbox().evict(checkId);
    if (result.ok) {
      const listed = result.response?.headers.find(([n]) => n === 'x-handlers')?.[1] ?? '';
      return { ok: true, handlers: listed ? listed.split(',') : [] };
    }
    return {
      ok: false,
      error: result.error?.message ?? 'the server module did not load',
      ...(result.error?.stack ? { stack: result.error.stack } : {}),
    };
  };

  checkModule.discard = (releaseId) => sandbox().evict(releaseId);

  return {
    handle,
    handleAlias,
    handlePreview,
    analytics,
    routes,
    feed,
    checkModule,
    caches,
    sandbox,
    sandboxStats: () => pool?.stats() ?? null,
    meter,
    events,
    endStreams: () => dev?.close(),
    httpCache,
    async close() {
      dev?.close();
      routes.close();
      await feed.close();
      await meter.close();
      await analytics.close();
      await events.close();
      await pool?.close();
    },
  };
}
