/**
 * App origins: `<app_id>.<apps host>`. Routing order is the contract's: reserved
 * `/_platform/*`, a static file under `runtime.static_root`, a directory's `index.html`,
 * then the fallback (`server`, `index.html` or `404`). Static hits are answered from memory.
 */
import { appOrigin } from '../apps/mappers.ts';
import type { Deps } from '../deps.ts';
import { REQUEST_ID_HEADER, requestIdFor } from '../http/request-id.ts';
import { headerReads, type HeaderReads, type NodeIncoming } from '../http/parsed-headers.ts';
import type { LiveApp, ReleaseFile, ReleaseView } from '../releases/live.ts';
import {
  type AssetRules,
  redirectFor,
  withHeaderRules,
  workersAssetAnswer,
  workersPageFor,
} from '../releases/asset-rules.ts';
import { directStaticFile } from '../runtime/assets.ts';
import { decodeAppPath } from '../runtime/paths.ts';
import type { NodeRuntime } from '../runtime/node-runtime.ts';
import { runServerFallback } from './server-fallback.ts';
import { representation, serveFile, STATIC_CACHE_CONTROL, staticStatus } from './static.ts';
import { platformRoutes } from './platform/router.ts';
import { noindex, previewGate } from './preview-gate.ts';
import { createDevMode, DEV_PATH, isDocumentRequest } from './dev-mode.ts';
import type { CacheMiss } from '../runtime/http-cache.ts';
import {
  notAcceptable,
  notPublished,
  originBlocked,
  originError,
  originFail,
  originJson,
  routeDisabled,
} from './respond.ts';
import { REQUESTS_METRIC } from '../usage/meter.ts';
import { createBodyBudget } from '../http/body-budget.ts';
import { errorBody } from '../errors.ts';
import type { RouteEntry } from '../domains/table.ts';
import { sameOriginPath } from '../lib/same-origin-path.ts';
import { type OriginRequest, originRequest } from './origin-request.ts';

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
  /** Ends answers that stay open by design (dev mode's event streams), so the HTTP server can close. */
  endStreams(): void;
  close(): Promise<void>;
};

/** The app origin's request path over the node's runtime (`runtime/node-runtime.ts`). */
export function createAppsPlane(deps: Deps, runtime: NodeRuntime): AppsPlane {
  const { caches, sandbox, routes, meter, analytics, events, httpCache } = runtime;
  const appsSuffix = `.${deps.config.hosts.apps}`;

  /** The one capture point: every request an app origin serves, once its status is known (quota and analytics). */
  function capture(r: OriginRequest, app: LiveApp, status: number): void {
    meter.record({ accountId: app.accountId, appId: app.appId, status });
    const referrer = r.reads.get('referer');
    // the host only matters to tell a self-referral: built only when there is a referrer
    analytics.add({
      appId: app.appId,
      status,
      via: r.via,
      target: status === 404 && r.target === 'static' ? 'not_found' : r.target,
      pathname: r.pathname,
      host: referrer ? (r.host ?? app.appId + appsSuffix) : '',
      referrer,
      userAgent: r.reads.get('user-agent'),
    });
  }
  const dev = deps.config.devMode ? createDevMode(deps, caches) : undefined;
  const bodies = createBodyBudget();

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

  async function serve(
    r: OriginRequest,
    app: LiveApp,
    f: ReleaseFile,
    status: number,
    rules?: AssetRules | null,
  ): Promise<Response> {
    const rep = representation(r.reads, f);
    if (!rep) return notAcceptable(r.requestId);
    const res = serveFile(
      r.req,
      rep,
      r.req.method === 'HEAD' ? null : await caches.body(app.accountId, rep.blob),
      status,
      r.requestId,
      staticStatus(r.reads, rep, status),
    );
    return rules ? withHeaderRules(res, rules, r.pathname) : res;
  }

  /** `_redirects`: a redirect, or a 200 rule's file answering at this URL (asset-rules.ts). */
  async function redirected(r: OriginRequest, app: LiveApp, release: ReleaseView) {
    const rule = redirectFor(release.assetRules!, r.pathname, r.search);
    if (!rule) return undefined;
    if (rule.status === 200) {
      const f = directStaticFile(release, rule.to.split('?')[0]!);
      return f ? serve(r, app, f, 200, release.assetRules) : undefined;
    }
    const to = /^https?:\/\//i.test(rule.to) ? rule.to : sameOriginPath(rule.to);
    return new Response(null, {
      status: rule.status,
      headers: { location: to, [REQUEST_ID_HEADER]: r.requestId },
    });
  }

  // A plain function, not a Hono router, with no per-request closures: this is the hottest path.
  async function route(r: OriginRequest, appId: string): Promise<Response> {
    const app = await caches.liveApp(appId);
    if (!app) return notPublished(r.req, r.requestId);
    const following = meter.follow(app.accountId);
    if (following) await following;
    const refused = refusal(app, r.requestId);
    if (refused) return refused;
    if (dev && r.pathname.startsWith(DEV_PATH)) {
      const answer = dev.answer(r.req, r.pathname, app.appId, r.requestId);
      if (answer) return answer;
    }
    const page = dev !== undefined && isDocumentRequest(r.req);
    if (page) {
      r.req = dev.documentRequest(r.req);
      r.reads = headerReads(r.req, undefined);
    }
    let res = await routeLive(r, app);
    if (page) res = dev.decorate(res, app.releaseId);
    capture(r, app, res.status);
    return res;
  }

  /** A redirect within the app: `//name` would be read as another host, so the path starts with one slash. */
  const redirectTo = (status: number, to: string, requestId: string, cache?: string) =>
    new Response(null, {
      status,
      headers: {
        location: sameOriginPath(to.replace(/^\/+/, '/')),
        ...(cache ? { 'cache-control': cache } : {}),
        [REQUEST_ID_HEADER]: requestId,
      },
    });

  async function routeLive(r: OriginRequest, app: LiveApp): Promise<Response> {
    const { req, requestId } = r;
    const release = await caches.release(app.releaseId);
    if (!release) return originFail('not_found', 'No app is published at this address.', requestId);

    const path = decodeAppPath(r.pathname);
    if (!path) return originFail('not_found', 'Not found.', requestId);
    if (path.segments[0] === '_platform') {
      r.target = 'server';
      return platformRoutes.fetch(req, {
        deps,
        caches,
        sandbox,
        httpCache,
        app,
        release,
        requestId,
        client: r.client,
      });
    }

    const { runtime: manifestRuntime } = release.manifest;
    const root = release.staticRoot;
    const files = release.files;
    const rel = path.segments.join('/');
    const readable = req.method === 'GET' || req.method === 'HEAD';

    if (readable) {
      const ruled = release.assetRules && (await redirected(r, app, release));
      if (ruled) return ruled;
      // a Workers project's pages follow its html_handling (307s to the canonical form)
      const w = release.workersAssets;
      const page = workersPageFor(release, path.segments, path.directory);
      if (page && 'file' in page) return serve(r, app, page.file, 200, release.assetRules);
      if (page) return redirectTo(307, `${page.redirect}${r.search}`, requestId);
      const direct = directStaticFile(release, r.pathname);
      if (direct && !(w?.html_handling === 'none' && path.directory))
        return serve(r, app, direct, 200, release.assetRules);
      // `/dir` names a directory with an index.html: redirect to `/dir/` (Workers projects: above)
      if (root !== null && !w && rel && !path.directory && files.has(`${root}/${rel}/index.html`))
        return redirectTo(301, `${r.pathname}/${r.search}`, requestId, STATIC_CACHE_CONTROL);
      const workers = root !== null ? workersAssetAnswer(release, rel, req) : null;
      if (workers) return serve(r, app, workers, 200, release.assetRules);
    }
    const fallback = manifestRuntime.fallback ?? '404';
    if (fallback === 'server') {
      r.target = 'server';
      const reads = r.reads;
      const run = (q: Request, id: string, cacheMiss?: CacheMiss) =>
        runServerFallback(
          deps,
          { caches, sandbox, events, bodies, httpCache },
          {
            req: q,
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
    if (rootIndex) return serve(r, app, rootIndex, 200, release.assetRules);
    const page404 = root === null ? undefined : files.get(`${root}/404.html`);
    if (page404) return serve(r, app, page404, 404, release.assetRules);
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
  function fromMemory(r: OriginRequest, appId: string): Response | undefined {
    const { req, reads, requestId } = r;
    const method = req.method;
    if ((method !== 'GET' && method !== 'HEAD') || dev) return undefined;
    const app = caches.liveAppCached(appId);
    if (!app || app.block !== null || overQuota(app)) return undefined;
    const release = caches.releaseCached(app.releaseId);
    // a release with _redirects or _headers takes the full path; so does a Workers project's page
    if (!release || release.assetRules) return undefined;
    if (release.workersAssets && /(\/|\.html|\/index)$/.test(r.pathname)) return undefined;
    const f = directStaticFile(release, r.pathname);
    if (f) {
      const rep = representation(reads, f);
      if (!rep) return undefined;
      const bytes = method === 'HEAD' ? null : caches.bytesCached(rep.blob);
      if (bytes === undefined) return undefined;
      const status = staticStatus(reads, rep, 200);
      capture(r, app, status);
      return serveFile(req, rep, bytes, 200, requestId, status);
    }
    if (!httpCache || release.manifest.runtime.fallback !== 'server') return undefined;
    // an entry exists only for a URL this release answered from its server code (purged on publish)
    const found = httpCache.lookup(app.appId, req, reads, requestId, false);
    if (found.kind !== 'hit' || found.refresh) return undefined;
    r.target = 'server';
    capture(r, app, found.response.status);
    return found.response;
  }

  function handle(
    req: Request,
    appId: string,
    client = 'unknown',
    incoming?: NodeIncoming,
  ): Response | Promise<Response> {
    runtime.listen();
    const reads = headerReads(req, incoming);
    const r = originRequest(
      req,
      reads,
      requestIdFor(reads.get(REQUEST_ID_HEADER)),
      client,
      'canonical',
      null,
    );
    try {
      const fast = fromMemory(r, appId);
      if (fast) return fast;
    } catch {
      // fall through to the full path, which reports errors properly
    }
    return handleSlow(r, appId);
  }

  async function handleSlow(r: OriginRequest, appId: string): Promise<Response> {
    try {
      // Every response route() builds carries the request id already (set at construction).
      return await route(r, appId);
    } catch (err) {
      return originError(deps, err, r.requestId, { app_id: appId });
    }
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
    const r = originRequest(req, reads, requestId, client, entry.routeType, hostname);
    try {
      const fast = fromMemory(r, entry.appId);
      if (fast) return fast;
    } catch {
      // the full path reports errors properly
    }
    return handleSlow(r, entry.appId);
  }

  function handleAlias(
    req: Request,
    hostname: string,
    client = 'unknown',
    incoming?: NodeIncoming,
  ): Response | Promise<Response> {
    runtime.listen();
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
    runtime.listen();
    const reads = headerReads(req, incoming);
    const requestId = requestIdFor(reads.get(REQUEST_ID_HEADER));
    try {
      const r = originRequest(req, reads, requestId, client, 'canonical', null);
      const found = () => caches.previewApp(target.appId, target.releaseId);
      const door = await previewGate(deps, req, target, r.pathname, requestId, found);
      if (door) return door;
      const app = await found();
      if (!app)
        return noindex(
          originFail('not_found', 'There is no preview of this release to serve.', requestId),
        );
      const refused = refusal(app, requestId);
      if (refused) return noindex(refused);
      const res = await routeLive(r, app);
      meter.record({ accountId: app.accountId, appId: app.appId, status: res.status });
      return noindex(res);
    } catch (err) {
      return noindex(originError(deps, err, requestId, { app_id: target.appId }));
    }
  }

  return {
    handle,
    handleAlias,
    handlePreview,
    endStreams: () => dev?.close(),
    async close() {
      dev?.close();
    },
  };
}
