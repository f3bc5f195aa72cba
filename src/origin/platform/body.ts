/**
 * Bodies and method answers shared by the `/_platform/*` routers. A mutation first passes the
 * same-origin check (`refuseMutation`); a JSON body is then read within its byte limit, parsed and,
 * where its shape is fixed, validated with a valibot schema.
 */
import type { Context } from 'hono';
import type * as v from 'valibot';
import { ApiError, errorBody } from '../../errors.ts';
import { readBodyLimited, parseWith } from '../../http/validate.ts';
import { originJson } from '../respond.ts';
import { isJsonType, refuseMutation } from '../same-origin.ts';
import type { OriginEnv } from './env.ts';

/** Refuses a cross-site browser mutation (403), as an ApiError for the router's error handler. */
export function sameOrigin(req: Request): void {
  const refused = refuseMutation(req);
  if (refused) throw refused;
}

/** The parsed JSON body, at most `maxBytes`: 400 unless sent as application/json and valid JSON, 413 beyond. */
export async function readJson(req: Request, maxBytes: number): Promise<unknown> {
  if (!isJsonType(req.headers.get('content-type')))
    throw new ApiError('unsupported_media_type', 'Send the body as application/json.');
  const bytes = await readBodyLimited(
    req,
    maxBytes,
    () => new ApiError('payload_too_large', 'Body too large.'),
  );
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ApiError('invalid_json', 'Request body is not valid JSON.');
  }
}

/** The JSON body validated against `schema`; `what` names it in the 400 (`Invalid <what>.`). */
export async function readBody<S extends v.GenericSchema>(
  req: Request,
  schema: S,
  maxBytes: number,
  what = 'request body',
): Promise<v.InferOutput<S>> {
  return parseWith(schema, await readJson(req, maxBytes), what);
}

/** A 405 naming the methods this path takes, in the message and in `Allow`. */
export function notAllowed(...methods: string[]) {
  const words =
    methods.length > 1
      ? `${methods.slice(0, -1).join(', ')} or ${methods[methods.length - 1]}`
      : methods[0];
  const allowHeader = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  return (c: Context<OriginEnv>) =>
    originJson(405, errorBody('method_not_allowed', `Use ${words}.`), c.env.requestId, {
      'cache-control': 'no-store',
      allow: allowHeader,
    });
}

/** A JSON answer with the request id; `/_platform` answers are about one visitor, so never cached. */
export function send(
  c: Context<OriginEnv>,
  status: number,
  body: unknown,
  extra?: Record<string, string>,
): Response {
  return originJson(status, body, c.env.requestId, { 'cache-control': 'no-store', ...extra });
}
