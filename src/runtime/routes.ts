/**
 * App origins: `<app_id>.<apps host>`. Routing order is the contract's: reserved
 * `/_platform/*`, a static file under `runtime.static_root`, a directory's `index.html`,
 * then the fallback (`server`, `index.html` or `404`). Static hits are answered from memory.
 */
import type { Hono } from 'hono';
import { appOrigin } from '../apps/mappers.ts';
import type { Deps } from '../deps.ts';
import { errorBody } from '../errors.ts';
import { baseRouter } from '../http/base.ts';
import type { Env } from '../http/env.ts';
import { classifyHost } from '../http/hosts.ts';
import { createRuntimeCaches, type RuntimeCaches } from './live.ts';
import { decodeAppPath } from './paths.ts';
import { SandboxPool } from './sandbox/pool.ts';
import { runServerFallback } from './server-fallback.ts';
import { serveFile } from './static.ts';

export type AppsPlane = { router: Hono<Env>; caches: RuntimeCaches; sandbox(): SandboxPool; close(): Promise<void> };

const notFound = (message = 'Not found.') => Response.json(errorBody('not_found', message), { status: 404 });

export function createAppsPlane(deps: Deps): AppsPlane {
  const caches = createRuntimeCaches(deps);
  let pool: SandboxPool | undefined;
  const sandbox = () =>
    (pool ??= new SandboxPool({
      workers: deps.config.sandbox.workers,
      limits: { cpuMs: deps.config.sandbox.cpuMs, memoryBytes: deps.config.sandbox.memoryBytes, stackBytes: 512 * 1024, wallMs: deps.config.sandbox.wallMs },
      hardKillMs: Math.max(1000, deps.config.sandbox.cpuMs * 10),
      onWorkerExit: (info) => deps.log.warn('sandbox worker replaced', info),
    }));

  const r = baseRouter(deps);
  r.all('*', async (c) => {
    const url = new URL(c.req.url);
    const host = classifyHost(deps.config, url.hostname);
    if (host.kind !== 'app') return notFound('No app is published at this address.');
    const app = await caches.liveApp(host.label);
    if (!app) return notFound('No app is published at this address.');
    const release = await caches.release(app.releaseId);
    if (!release) return notFound('No app is published at this address.');

    const path = decodeAppPath(url.pathname);
    if (!path) return notFound();
    if (path.segments[0] === '_platform') return notFound('Unknown reserved path.');

    const req = c.req.raw;
    const { runtime } = release.manifest;
    const root = runtime.static_root;
    const rel = path.segments.join('/');
    const readable = req.method === 'GET' || req.method === 'HEAD';
    const file = (p: string) => release.files.get(p);
    const serve = async (p: string, status = 200) => {
      const f = file(p)!;
      return serveFile(req, f, req.method === 'HEAD' ? null : await caches.bytes(app.accountId, f), status);
    };

    if (readable) {
      if (rel && !path.directory && file(`${root}/${rel}`)) return serve(`${root}/${rel}`);
      const index = rel ? `${root}/${rel}/index.html` : `${root}/index.html`;
      if (file(index)) {
        if (path.directory || !rel) return serve(index);
        return new Response(null, { status: 301, headers: { location: `${url.pathname}/${url.search}`, 'cache-control': 'public, max-age=0, must-revalidate' } });
      }
    }
    const fallback = runtime.fallback ?? '404';
    if (fallback === 'server') {
      return runServerFallback(deps, { caches, sandbox }, { req, app, release, origin: appOrigin(deps.config, app.appId), requestId: c.var.requestId });
    }
    if (!readable) return Response.json(errorBody('method_not_allowed', `${req.method} is not allowed here.`), { status: 405, headers: { allow: 'GET, HEAD' } });
    if (fallback === 'index.html' && file(`${root}/index.html`)) return serve(`${root}/index.html`);
    if (file(`${root}/404.html`)) return serve(`${root}/404.html`, 404);
    return notFound();
  });

  return {
    router: r,
    caches,
    sandbox,
    async close() {
      await pool?.close();
    },
  };
}
