/**
 * `GET /_internal/tls/permission?domain=...`: the `ask` endpoint of Caddy's on-demand TLS (and of
 * any proxy that asks the same way). 200 for a name this platform serves (its own hosts, a live
 * app's canonical origin, an active slug or custom domain), 404 for anything else, so a
 * certificate is never requested for a name nobody verified. Answered from the in-memory route
 * table and live-app cache. With `PLATFORM_TLS_ASK_TOKEN` set, the caller must also send
 * `token=<it>` (in the ask URL: Caddy keeps its query and adds `domain`), else 403.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import * as v from 'valibot';
import { classifyHost } from '../http/hosts.ts';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { query } from '../http/validate.ts';
import { component } from '../openapi/components.ts';
import type { NodeRuntime } from '../runtime/node-runtime.ts';

export const TlsPermissionQuery = v.strictObject({
  domain: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  token: v.optional(v.string()),
});
export const TlsPermission = component(
  'TlsPermission',
  v.strictObject({
    domain: v.string(),
    allowed: v.literal(true),
    kind: v.picklist(['platform', 'app_origin', 'slug', 'custom_domain']),
  }),
);

const ask = operation({
  operationId: 'tlsPermission',
  summary: "May a certificate be issued for this name? (Caddy's on-demand TLS `ask`)",
  description:
    '200 for a name the platform serves now: its own hosts, a live app origin, an active slug or custom domain; 404 `not_found` otherwise. When the operator sets `PLATFORM_TLS_ASK_TOKEN`, `token` must match (403 otherwise).',
  tags: ['Routes and domains'],
  security: 'none',
  responses: { 200: TlsPermission },
  errors: ['not_found', 'forbidden', 'invalid_request'],
});

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function tlsPermissionRoutes(runtime: NodeRuntime): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/permission', ask, query(TlsPermissionQuery), async (c) => {
    const { config } = c.var.deps;
    const q = c.var.query as v.InferOutput<typeof TlsPermissionQuery>;
    const expected = config.domains.tlsAskToken;
    if (expected && !same(q.token ?? '', expected))
      throw new ApiError(
        'forbidden',
        'This endpoint needs the token the operator configured (PLATFORM_TLS_ASK_TOKEN).',
      );
    const domain = q.domain.trim().toLowerCase().replace(/\.$/, '');
    const deny = () =>
      new ApiError('not_found', `${domain} is not served by this platform; no certificate.`);
    const host = classifyHost(config, domain);
    if (host.kind === 'unknown') throw deny();
    if (host.kind === 'preview') {
      const app = await runtime.caches.previewApp(host.appId, host.releaseId);
      if (!app || app.block) throw deny();
      return ask.reply(c, 200, { domain, allowed: true, kind: 'app_origin' });
    }
    if (host.kind !== 'app' && host.kind !== 'custom') {
      // the configured names only: the loopback aliases of the API host get no certificate
      if (!Object.values(config.hosts).includes(domain)) throw deny();
      return ask.reply(c, 200, { domain, allowed: true, kind: 'platform' });
    }
    if (host.kind === 'app') {
      const app = await runtime.caches.liveApp(host.label);
      if (!app || app.block) throw deny();
      return ask.reply(c, 200, { domain, allowed: true, kind: 'app_origin' });
    }
    const route = await runtime.routes.lookup(host.hostname);
    if (route?.status !== 'active') throw deny();
    return ask.reply(c, 200, { domain, allowed: true, kind: route.routeType });
  });
  return r;
}
