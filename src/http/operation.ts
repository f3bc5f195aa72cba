/**
 * What a route answers, written once beside it. `operation()` documents a route for
 * `/openapi.json` (its id, summary, success bodies and error codes) and gives the handler a typed
 * `reply()`, so a handler can only send the body its documented schema describes. Middleware that
 * can refuse a request (body and query validators, app access) marks its own error codes the
 * same way, and the generator merges every mark on a route.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type * as v from 'valibot';
import type { ErrorCode } from '../errors.ts';
import type { Env } from './env.ts';

/** Marker read by the OpenAPI generator off a route's handlers. */
export const ROUTE_SPEC = Symbol.for('platform.route-spec');

/**
 * Who may call an operation: `signedIn` (a bearer API key, or on the console host the session
 * cookie, with `X-Platform-CSRF` on mutations), `session` (the console session only), or `none`.
 */
export type Security = 'signedIn' | 'session' | 'none';

/** Success bodies by status; `null` for a status that answers with no JSON body. */
export type SuccessResponses = Record<number, v.GenericSchema | null>;

export type RouteSpec = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  body?: v.GenericSchema;
  query?: v.GenericSchema;
  responses?: SuccessResponses;
  /** Error codes this route can answer; their statuses come from the catalogue in errors.ts. */
  errors?: ErrorCode[];
  security?: Security;
  /** The route acts on the account chosen by `X-Platform-Account-Id` (or the default one). */
  accountHeader?: boolean;
  /** A success body that is text, not JSON (`/metrics`): its media type and an example. */
  text?: { contentType: string; example: string };
};

export type Marked = MiddlewareHandler<Env> & { [ROUTE_SPEC]?: RouteSpec };

/** Attaches documentation to a middleware; it changes nothing at request time. */
export function mark(handler: MiddlewareHandler<Env>, spec: RouteSpec): Marked {
  return Object.assign(handler, { [ROUTE_SPEC]: spec });
}

type BodyOf<R extends SuccessResponses, S extends keyof R> = R[S] extends v.GenericSchema
  ? v.InferOutput<R[S]>
  : never;

export type Operation<R extends SuccessResponses> = Marked & {
  /** Sends `body` with `status`; both are checked against the documented responses at compile time. */
  reply<S extends keyof R & ContentfulStatusCode>(
    c: Context<Env>,
    status: S,
    body: BodyOf<R, S>,
  ): Response;
};

/**
 * Documents a route and types its answers:
 * `const getApp = operation({ operationId: 'getApp', ..., responses: { 200: AppSummary } })`, then
 * `r.get('/:app_id', getApp, appAccess('apps.read'), (c) => getApp.reply(c, 200, toAppSummary(...)))`.
 */
export function operation<const R extends SuccessResponses>(
  spec: Omit<RouteSpec, 'body' | 'query' | 'responses'> & {
    operationId: string;
    summary: string;
    tags: string[];
    responses: R;
  },
): Operation<R> {
  const handler = mark(async (_c, next) => next(), spec);
  return Object.assign(handler, {
    reply<S extends keyof R & ContentfulStatusCode>(
      c: Context<Env>,
      status: S,
      body: BodyOf<R, S>,
    ): Response {
      return c.json(body as object, status);
    },
  });
}
