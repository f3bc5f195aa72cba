/**
 * How the app origin writes JSON: one place turns an error into the contract's error body (an
 * `ApiError` with its status and `Retry-After`, a Postgres constraint error mapped, anything else a
 * logged 500 that quotes the request id). Headers are plain objects so node-server keeps its fast path.
 */
import { mapPgError } from '../db/pg-errors.ts';
import type { Deps } from '../deps.ts';
import { ApiError, errorBody, type ErrorCode, statusOf } from '../errors.ts';
import { REQUEST_ID_HEADER } from '../http/request-id.ts';
import type { ServingBlock } from '../releases/live.ts';
import type { RouteEntry } from '../domains/table.ts';

export function originJson(
  status: number,
  body: unknown,
  requestId: string,
  extra?: Record<string, string>,
): Response {
  return new Response(body === null ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId, ...extra },
  });
}

/** An error body for `code` at the catalogue's status. */
export function originFail(
  code: ErrorCode,
  message: string,
  requestId: string,
  extra?: Record<string, string>,
): Response {
  return originJson(statusOf(code), errorBody(code, message), requestId, extra);
}

/**
 * An address where nothing is published: a browser navigating there (Fetch Metadata says so) gets a
 * short page saying so; anything else, the contract's error body. Both 404, both with the request id.
 */
export function notPublished(req: Request, requestId: string): Response {
  if (req.headers.get('sec-fetch-mode') !== 'navigate' || req.method !== 'GET')
    return originFail('not_found', 'No app is published at this address.', requestId);
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Nothing is published here</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:15vh auto;padding:0 1rem;color:#1d2430}code{background:#eef1f5;padding:.1em .3em;border-radius:4px}@media (prefers-color-scheme:dark){body{background:#12151b;color:#e7eaf0}code{background:#232935}}</style></head><body><h1>Nothing is published here</h1><p>No app is live at this address: it was never published, it was unpublished, or its owner has not made a release live yet.</p><p>Request <code>${requestId.replace(/[^\w.-]/g, '')}</code></p></body></html>`,
    {
      status: 404,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy':
          "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
        'cache-control': 'no-store',
        [REQUEST_ID_HEADER]: requestId,
      },
    },
  );
}

/** The origin's error handler: what every `/_platform/*` route and the origin's catch-all answer with. */
export function originError(
  deps: Deps,
  err: unknown,
  requestId: string,
  context: { app_id?: string; extra?: Record<string, string> } = {},
): Response {
  const known = err instanceof ApiError ? err : mapPgError(err);
  if (known) {
    const retry = known.details?.retry_after;
    const headers =
      typeof retry === 'number'
        ? { 'retry-after': String(retry), ...context.extra }
        : context.extra;
    return originJson(known.status, known.toBody(), requestId, headers);
  }
  deps.log.error('app origin error', {
    request_id: requestId,
    app_id: context.app_id,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return originJson(
    500,
    errorBody(
      'internal_error',
      'Something went wrong on our side. Quote the request id when reporting it.',
      { request_id: requestId },
    ),
    requestId,
  );
}

const BLOCKED: Record<ServingBlock, string> = {
  app_takedown: 'This app is unavailable for legal reasons.',
  account_suspended: 'This app is unavailable: its account is suspended.',
  app_suspended: 'This app has been suspended.',
};

/** What visitors of a flagged app get (the operator's reason stays with the owner: account status). */
export function originBlocked(block: ServingBlock, requestId: string): Response {
  return originJson(statusOf(block), errorBody(block, BLOCKED[block]), requestId, {
    'cache-control': 'no-store',
  });
}

/** The client accepts none of the encodings the file exists in (`identity;q=0`). */
export function notAcceptable(requestId: string): Response {
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

/** 404 for a pending or disabled alias, 410 for a removed one; app code never runs. */
export function routeDisabled(entry: RouteEntry, requestId: string): Response {
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
