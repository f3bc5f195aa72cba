import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { mapPgError } from '../db/pg-errors.ts';
import { ApiError, errorBody } from '../errors.ts';
import type { Env } from './env.ts';

function respond(c: Context<Env>, err: ApiError): Response {
  const retryAfter = err.details?.retry_after;
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return c.json(err.toBody(), err.status as 400);
}

/** The one place errors become responses; a 500 never carries the internal message. */
export const handleError: ErrorHandler<Env> = (err, c) => {
  if (err instanceof ApiError) return respond(c, err);
  const mapped = mapPgError(err);
  if (mapped) return respond(c, mapped);
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 413)
      return c.json(errorBody('payload_too_large', 'Request body is too large.'), 413);
    return c.json(errorBody('invalid_request', err.message || 'Invalid request.'), err.status);
  }
  c.var.deps?.log.error('unhandled error', {
    request_id: c.var.requestId,
    method: c.req.method,
    path: new URL(c.req.url).pathname,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return c.json(
    errorBody(
      'internal_error',
      'Something went wrong on our side. Quote the request id when reporting it.',
      { request_id: c.var.requestId },
    ),
    500,
  );
};

export const handleNotFound: NotFoundHandler<Env> = (c) =>
  c.json(
    errorBody('not_found', `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`),
    404,
  );
