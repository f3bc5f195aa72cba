import { closeD1 } from './sql/d1.ts';
import { d1Routes } from './sql/routes.ts';
import { Hono } from 'hono';
import { accountRoutes } from './accounts/routes.ts';
import { planRoutes } from './plans/routes.ts';
import { billingRoutes } from './billing/routes.ts';
import { paymentsWebhookRoutes } from './billing/webhook.ts';
import { apiKeyRoutes } from './api-keys/routes.ts';
import { appRoutes } from './apps/routes.ts';
import { eventRoutes } from './events/routes.ts';
import { inviteRoutes } from './app-auth/invites.ts';
import { domainRoutes } from './domains/routes.ts';
import { analyticsRoutes } from './analytics/routes.ts';
import { jobRoutes } from './jobs/routes.ts';
import { tlsPermissionRoutes } from './domains/tls.ts';
import { secretRoutes } from './secrets/routes.ts';
import { publicUrl } from './config.ts';
import type { Deps } from './deps.ts';
import { errorBody } from './errors.ts';
import { authenticate } from './http/auth.ts';
import { baseRouter, REQUEST_ID_HEADER } from './http/base.ts';
import type { Env } from './http/env.ts';
import { health, HealthResponse } from './http/health.ts';
import { classifyHost, type HostKind } from './http/hosts.ts';
import { newRequestId } from './http/request-id.ts';
import type { NodeIncoming } from './http/parsed-headers.ts';
import { operation } from './http/operation.ts';
import { legacyRoutes } from './legacy/routes.ts';
import { consoleNotFound, consolePages } from './console/routes.ts';
import { handleNotFound } from './http/error-handler.ts';
import { docsPages, manifestSchemaResponse } from './docs/routes.ts';
import { MANIFEST_SCHEMA_PATH } from './docs/manifest-schema.ts';
import { deviceApprovalRoutes, deviceStartRoutes } from './device-auth/routes.ts';
import { memberRoutes } from './members/routes.ts';
import { sessionRoutes, signInRoutes } from './sign-in/routes.ts';
import { operatorRoutes } from './operators/routes.ts';
import { dataRoutes } from './data/routes.ts';
import { appUserRoutes } from './app-auth/routes.ts';
import { fileRoutes } from './files/routes.ts';
import { bindingRoutes } from './bindings/routes.ts';
import { createMetrics, type HostKindLabel, type Metrics } from './metrics/metrics.ts';
import { metricsRoutes } from './metrics/routes.ts';
import { createAppsPlane, type AppsPlane } from './origin/plane.ts';
import { releaseRoutes } from './releases/routes.ts';
import { createNodeRuntime, type NodeRuntime } from './runtime/node-runtime.ts';
import { generateOpenApi, type OpenApiDocument } from './openapi/generate.ts';
import { FreeObject } from './openapi/components.ts';

const healthz = operation({
  operationId: 'health',
  summary: 'Service health',
  tags: ['Service'],
  security: 'none',
  responses: { 200: HealthResponse },
});
const manifestSchemaOp = operation({
  operationId: 'manifestSchema',
  summary: "The manifest's JSON Schema (v0), for editors through $schema",
  tags: ['Service'],
  security: 'none',
  responses: { 200: FreeObject },
});
const openapiJson = operation({
  operationId: 'openapi',
  summary: 'This document (OpenAPI 3.1)',
  tags: ['Service'],
  security: 'none',
  responses: { 200: FreeObject },
});

/** The `/v0` business API, the same on the API host and the console host. */
function v0Routes(runtime: NodeRuntime, host: { console: boolean }): Hono<Env> {
  const v0 = new Hono<Env>();
  v0.route('/', legacyRoutes()); // before authentication: they answer 410 to anyone
  v0.route('/', signInRoutes(host)); // getting signed in needs no authentication
  v0.route('/auth/device', deviceStartRoutes());
  v0.route('/', paymentsWebhookRoutes()); // Stripe signs its events; no API key
  v0.use('*', authenticate({ cookies: host.console }));
  v0.route('/platform/session', sessionRoutes());
  v0.route('/auth/device', deviceApprovalRoutes());
  v0.route('/accounts', memberRoutes());
  v0.route('/accounts', accountRoutes());
  v0.route('/accounts', planRoutes({ meter: runtime.meter }));
  v0.route('/billing', billingRoutes());
  v0.route('/auth/api-keys', apiKeyRoutes());
  v0.route('/apps', appRoutes({ checkModule: runtime.checkModule }));
  v0.route('/apps', releaseRoutes({ checkModule: runtime.checkModule }));
  v0.route('/apps', eventRoutes());
  v0.route('/apps', secretRoutes());
  v0.route('/apps', inviteRoutes());
  v0.route('/apps', domainRoutes());
  v0.route('/apps', analyticsRoutes());
  v0.route('/apps', jobRoutes());
  v0.route('/apps', dataRoutes());
  v0.route('/apps', appUserRoutes());
  v0.route('/apps', fileRoutes());
  v0.route('/apps', bindingRoutes());
  v0.route('/apps', d1Routes());
  v0.route('/operator', operatorRoutes());
  return v0;
}

function apiRouter(deps: Deps, runtime: NodeRuntime, metrics: Metrics): Hono<Env> {
  const api = baseRouter(deps);
  api.get('/healthz', healthz, async (c) => healthz.reply(c, 200, await health(deps)));
  api.route('/', metricsRoutes(metrics));
  api.route('/_internal/tls', tlsPermissionRoutes(runtime));
  api.route('/v0', v0Routes(runtime, { console: false }));
  api.get(MANIFEST_SCHEMA_PATH, manifestSchemaOp, (c) =>
    manifestSchemaResponse(c, publicUrl(deps.config, deps.config.hosts.api)),
  );
  let openapi: OpenApiDocument | undefined;
  api.get('/openapi.json', openapiJson, (c) => {
    openapi ??= generateOpenApi(api, { serverUrl: publicUrl(deps.config, deps.config.hosts.api) });
    return openapiJson.reply(c, 200, openapi);
  });
  return api;
}

function consoleRouter(deps: Deps, runtime: NodeRuntime): Hono<Env> {
  const r = baseRouter(deps);
  r.route('/v0', v0Routes(runtime, { console: true }));
  const { publicScheme, publicPort, hosts } = deps.config;
  // the file browser previews images served by the app origins
  const appOrigins = `${publicScheme}://*.${hosts.apps}${publicPort ? `:${publicPort}` : ''}`;
  const docsUrl = publicUrl(deps.config, hosts.docs);
  r.route(
    '/',
    consolePages({
      devOutbox: !deps.config.mail.smtpUrl,
      plans: deps.config.plans,
      appOrigins,
      docsUrl,
    }),
  );
  // a page that does not exist is a page; an API path that does not exist stays JSON
  r.notFound((c) =>
    c.req.path.startsWith('/v0/') || c.req.path.startsWith('/assets/')
      ? handleNotFound(c)
      : consoleNotFound(c, docsUrl, appOrigins),
  );
  return r;
}

function docsRouter(deps: Deps, api: Hono<Env>): Hono<Env> {
  const r = baseRouter(deps);
  let doc: OpenApiDocument | undefined;
  const document = () =>
    (doc ??= generateOpenApi(api, { serverUrl: publicUrl(deps.config, deps.config.hosts.api) }));
  r.route('/', docsPages({ document, publicBase: publicUrl(deps.config, deps.config.hosts.docs) }));
  return r;
}

export type Server = Hono<Env> & {
  api: Hono<Env>;
  /** the app origins' request path */
  apps: AppsPlane;
  /** the node's runtime the origins, the API and the worker share */
  runtime: NodeRuntime;
  metrics: Metrics;
  close(): Promise<void>;
};

const METRIC_KIND: Record<string, HostKindLabel> = {
  api: 'api',
  console: 'console',
  docs: 'docs',
  app: 'app',
  preview: 'app',
  custom: 'custom',
};

/**
 * Builds the whole HTTP surface over the node's runtime (its own when none is given, closed with
 * it); no I/O happens until a request arrives (sandbox threads start on first use).
 */
export function createServer(deps: Deps, options: { runtime?: NodeRuntime } = {}): Server {
  const runtime = options.runtime ?? createNodeRuntime(deps);
  const owned = options.runtime === undefined;
  const appsPlane = createAppsPlane(deps, runtime);
  const metrics = createMetrics(deps, runtime);
  const api = apiRouter(deps, runtime, metrics);
  const consoleHost = consoleRouter(deps, runtime);
  const docs = docsRouter(deps, api);
  const root = new Hono<Env>();
  const hosts = hostClassifier(deps);
  // Host dispatch happens before any router: app origins go straight to their fast path.
  type NodeEnv = { incoming?: NodeIncoming };
  // every answer is counted and timed by host kind (src/metrics/metrics.ts)
  const dispatch = (req: Request, env?: NodeEnv): Response | Promise<Response> => {
    const started = performance.now();
    const host = hosts.classify(req.url);
    const kind = METRIC_KIND[host.kind] ?? 'unknown';
    const answer = route(req, host, env);
    if (answer instanceof Response) {
      metrics.observe(kind, answer.status, started);
      return answer;
    }
    return answer.then((res) => {
      metrics.observe(kind, res.status, started);
      return res;
    });
  };
  const route = (req: Request, host: HostKind, env?: NodeEnv): Response | Promise<Response> => {
    switch (host.kind) {
      case 'api':
        return api.fetch(req, env);
      case 'console':
        return consoleHost.fetch(req, env);
      case 'docs':
        return docs.fetch(req);
      case 'app':
        return appsPlane.handle(
          req,
          host.label,
          env?.incoming?.socket?.remoteAddress,
          env?.incoming,
        );
      case 'preview':
        return appsPlane.handlePreview(
          req,
          host,
          env?.incoming?.socket?.remoteAddress,
          env?.incoming,
        );
      case 'custom': // a slug or a custom domain
        return appsPlane.handleAlias(
          req,
          host.hostname,
          env?.incoming?.socket?.remoteAddress,
          env?.incoming,
        );
      default:
        return new Response(JSON.stringify(errorBody('not_found', 'Unknown host.')), {
          status: 404,
          headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: newRequestId() },
        });
    }
  };
  root.fetch = dispatch as typeof root.fetch;
  const close = async () => {
    await appsPlane.close();
    if (owned) await runtime.close();
    // this node's SQLite databases: their leases go back at once, for another node to open
    await closeD1(deps);
  };
  return Object.assign(root, { api, apps: appsPlane, runtime, metrics, close });
}

/** The host name in a URL authority (`user@host:port`, `[::1]:8787`), ports and user info dropped. */
function hostOfAuthority(authority: string): string {
  const at = authority.lastIndexOf('@');
  const hostport = at >= 0 ? authority.slice(at + 1) : authority;
  if (hostport.startsWith('[')) return hostport.slice(0, hostport.indexOf(']') + 1);
  const colon = hostport.indexOf(':');
  return colon >= 0 ? hostport.slice(0, colon) : hostport;
}

/**
 * Host classification memoised by the URL's authority (host and port as sent), since every
 * request needs it. Bounded: a flood of made-up Host headers only empties the memo.
 */
function hostClassifier(deps: Deps): { classify(url: string): HostKind } {
  const memo = new Map<string, HostKind>();
  return {
    classify(url: string): HostKind {
      // Both node-server and Deno hand over serialised URLs, whose path always starts with `/`.
      const start = url.indexOf('//') + 2;
      const end = url.indexOf('/', start);
      const authority = end < 0 ? url.slice(start) : url.slice(start, end);
      let kind = memo.get(authority);
      if (kind === undefined) {
        kind = classifyHost(deps.config, hostOfAuthority(authority));
        if (memo.size >= 4096) memo.clear();
        memo.set(authority, kind);
      }
      return kind;
    },
  };
}
