import type { Context, MiddlewareHandler } from 'hono';
import { roomFor, type BodyBudget } from './body-budget.ts';
import * as v from 'valibot';
import { ApiError, errors } from '../errors.ts';
import type { Env } from './env.ts';
import { mark } from './operation.ts';
import { fieldMap, jsonProblem, MAX_JSON_DEPTH } from '../lib/json.ts';
import { readIterableLimited, readLimited } from '../lib/streams.ts';

/** Turns valibot issues into `details.fields`: `{ "files.0.path": ["message"] }`. */
export function issueDetails(issues: readonly v.BaseIssue<unknown>[]): {
  fields: Record<string, string[]>;
} {
  const fields = fieldMap<string[]>();
  for (const issue of issues) {
    const key = issue.path?.map((p) => String(p.key)).join('.') || '(root)';
    (fields[key] ??= []).push(issue.message);
  }
  return { fields };
}

export function parseWith<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  what: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) throw errors.invalid(`Invalid ${what}.`, issueDetails(result.issues));
  return result.output;
}

/**
 * Reads at most `maxBytes` of the body, refusing more without buffering it (413); `arrived` as for
 * `readLimited`. From `nodeBody` (Node's own stream of it, `HeaderReads.nodeBody`) where given.
 */
export async function readBodyLimited(
  req: Request,
  maxBytes: number,
  tooLarge: () => ApiError,
  arrived?: (size: number) => void,
  nodeBody?: AsyncIterable<Uint8Array>,
): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  if (nodeBody) return readIterableLimited(nodeBody, maxBytes, tooLarge, arrived);
  if (!req.body) return new Uint8Array(0);
  return readLimited(req.body.getReader(), maxBytes, tooLarge, arrived);
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/** Validates a JSON body against `schema`; the output is in `c.var.body`. */
export function jsonBody<S extends v.GenericSchema>(
  schema: S,
  options: {
    maxBytes?: number;
    tooLarge?: () => ApiError;
    /** an absent body counts as `{}` */
    optional?: boolean;
    /** validates the parsed JSON instead of a plain schema parse (the schema still documents the route) */
    parse?: (json: unknown) => unknown;
    /** where the body takes its room (body-budget.ts), held until the handler is done; 503 when it does not fit */
    room?: (c: Context<Env>) => { budget: BodyBudget; owner: string };
  } = {},
): MiddlewareHandler<Env> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const tooLarge =
    options.tooLarge ??
    (() =>
      errors.tooLarge(`Request body is larger than ${maxBytes} bytes.`, { max_bytes: maxBytes }));
  return mark(
    async (c, next) => {
      const type = c.req.header('content-type') ?? '';
      if (
        options.optional &&
        !type &&
        (c.req.header('content-length') ?? '0') === '0' &&
        !c.req.header('transfer-encoding')
      ) {
        c.set('body', parseWith(schema, {}, 'request body'));
        return next();
      }
      if (!JSON_TYPE.test(type)) {
        throw new ApiError(
          'unsupported_media_type',
          'Request body must be JSON (Content-Type: application/json).',
          {
            content_type: type || null,
          },
        );
      }
      const where = options.room?.(c);
      const taken =
        where &&
        roomFor(where.budget, where.owner, c.req.header('content-length') ?? null, maxBytes, busy);
      if (where && !taken) throw busy();
      const room = taken?.room;
      try {
        const bytes = await readBodyLimited(c.req.raw, maxBytes, tooLarge, taken?.arrived);
        room?.hold(bytes.length);
        let parsed: unknown;
        try {
          parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
        } catch (err) {
          throw new ApiError('invalid_json', 'Request body is not valid JSON.', {
            reason: (err as Error).message,
          });
        }
        const problem = jsonProblem(parsed);
        if (problem?.kind === 'deep')
          throw errors.invalid(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`, {
            fields: { [problem.path]: [`nested deeper than ${MAX_JSON_DEPTH} levels`] },
          });
        if (problem)
          throw errors.invalid(
            'The body contains a NUL character (U+0000), which cannot be stored.',
            { fields: { [problem.path]: ['contains a NUL character (U+0000)'] } },
          );
        c.set(
          'body',
          options.parse ? options.parse(parsed) : parseWith(schema, parsed, 'request body'),
        );
        await next();
      } finally {
        room?.release();
      }
    },
    {
      body: schema,
      // what the body checks can answer; a custom `tooLarge` names its own code
      errors: [
        'invalid_request',
        'invalid_json',
        'unsupported_media_type',
        options.tooLarge ? options.tooLarge().code : 'payload_too_large',
        ...(options.room ? (['service_unavailable'] as const) : []),
      ],
    },
  );
}

/** Large bodies are already held up to the room there is (body-budget.ts): the client retries shortly. */
const busy = () =>
  new ApiError(
    'service_unavailable',
    'Too many large request bodies are being taken at once; retry in a few seconds.',
    { retry_after: 5 },
  );

/** Validates the query string against `schema` (values are strings); the output is in `c.var.query`. */
export function query<S extends v.GenericSchema>(schema: S): MiddlewareHandler<Env> {
  return mark(
    async (c, next) => {
      const url = new URL(c.req.url);
      const raw: Record<string, string> = {};
      for (const [k, val] of url.searchParams) {
        if (k in raw)
          throw errors.invalid('Invalid query.', {
            fields: { [k]: ['must be given at most once'] },
          });
        raw[k] = val;
      }
      c.set('query', parseWith(schema, raw, 'query'));
      await next();
    },
    { query: schema, errors: ['invalid_request'] },
  );
}

/** Typed accessors for handlers. */
export function bodyOf<S extends v.GenericSchema>(
  c: { var: Env['Variables'] },
  _schema: S,
): v.InferOutput<S> {
  return c.var.body as v.InferOutput<S>;
}
export function queryOf<S extends v.GenericSchema>(
  c: { var: Env['Variables'] },
  _schema: S,
): v.InferOutput<S> {
  return c.var.query as v.InferOutput<S>;
}

/** Closed object: unknown keys are refused, as the contract closes its bodies. */
export const closed = v.strictObject;
