import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { Deps } from '../deps.ts';
import type { Env } from './env.ts';
import { ApiError } from '../errors.ts';
import { handleError, handleNotFound } from './error-handler.ts';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.ts';

export { REQUEST_ID_HEADER };

/** Whether the path of an absolute URL (query and fragment aside) has `%00` in it. */
function hasEncodedNul(url: string): boolean {
  const at = url.indexOf('%00');
  if (at < 0) return false;
  const end = url.search(/[?#]/);
  return end < 0 || at < end;
}

/** A router with what every host shares: request id header, deps, the error model, access log. */
export function baseRouter(deps: Deps): Hono<Env> {
  const r = new Hono<Env>();
  r.use(requestId({ headerName: REQUEST_ID_HEADER, generator: newRequestId }));
  r.use(async (c, next) => {
    c.set('deps', deps);
    // No id, name, slug or host name contains a NUL, and Postgres cannot even compare one: such a path names nothing.
    if (hasEncodedNul(c.req.url))
      throw new ApiError(
        'not_found',
        'Nothing is found at a path that contains a NUL character (%00).',
      );
    const started = performance.now();
    await next();
    // Handlers that return a plain Response bypass c.header(): make sure the id is on every response.
    if (!c.res.headers.has(REQUEST_ID_HEADER)) {
      try {
        c.res.headers.set(REQUEST_ID_HEADER, c.var.requestId);
      } catch {
        c.res = new Response(c.res.body, c.res);
        c.res.headers.set(REQUEST_ID_HEADER, c.var.requestId);
      }
    }
    // Path only: query strings may carry tokens, so they are never logged.
    if (deps.config.logLevel === 'debug')
      deps.log.debug('request', {
        request_id: c.var.requestId,
        method: c.req.method,
        host: new URL(c.req.url).host,
        path: new URL(c.req.url).pathname,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
  });
  r.onError(handleError);
  r.notFound(handleNotFound);
  return r;
}
