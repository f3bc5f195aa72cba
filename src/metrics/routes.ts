/**
 * `GET /metrics` on the API host: for Prometheus with `PLATFORM_METRICS_TOKEN` as its bearer
 * token, or for an operator's API key. Anyone else: 401 (no or unknown credential) or 403.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { API_KEY_SHAPE, hashApiKey } from '../api-keys/keys.ts';
import { findActiveKeyByHash } from '../api-keys/queries.ts';
import { errors } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { isOperator } from '../operators/queries.ts';
import type { Metrics } from './metrics.ts';

const scrape = operation({
  operationId: 'getMetrics',
  summary: "The server's metrics in Prometheus's text format",
  description:
    "Send `Authorization: Bearer <PLATFORM_METRICS_TOKEN>` (the scrape config's `authorization.credentials`) or an operator's API key. Each node answers for itself: scrape every node. Families: `platform_http_*` (requests and latency by host kind), `platform_sandbox_*`, `platform_outbound_*`, `platform_jobs*`, `platform_event_writer_queued`, `platform_pg_pool_connections`, `platform_blob_cache_*`, and the Node process's own.",
  tags: ['Service'],
  security: 'none',
  responses: { 200: null },
  text: {
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    example:
      '# HELP platform_http_requests_total HTTP requests answered, by host kind and status\n# TYPE platform_http_requests_total counter\nplatform_http_requests_total{host_kind="app",status="200"} 1027\n',
  },
  errors: ['unauthorized', 'forbidden'],
});

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function metricsRoutes(metrics: Metrics): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/metrics', scrape, async (c) => {
    const { db, config } = c.var.deps;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    if (!match)
      throw errors.unauthorized(
        "Send Authorization: Bearer with PLATFORM_METRICS_TOKEN or an operator's API key.",
      );
    const token = match[1]!;
    if (!(config.metricsToken && same(token, config.metricsToken))) {
      const key = API_KEY_SHAPE.test(token)
        ? await findActiveKeyByHash(db, hashApiKey(token))
        : undefined;
      if (!key || key.revoked_at)
        throw errors.unauthorized('This token is not one that may read the metrics.');
      if (!(await isOperator(db, key.user_id)))
        throw errors.forbidden(
          "Only this server's operators (or PLATFORM_METRICS_TOKEN) may read the metrics.",
        );
    }
    const text = await metrics.registry.metrics();
    return c.body(text, 200, {
      'content-type': metrics.registry.contentType,
      'cache-control': 'no-store',
    });
  });
  return r;
}
