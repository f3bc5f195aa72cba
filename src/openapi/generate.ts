/**
 * OpenAPI 3.1 built from the routes registered on `api` and the valibot schemas their operations,
 * validators and access checks carry, so the document cannot drift from what the server checks
 * and sends. Named records come from `component()`; examples from `examples.json`, which the test
 * suite records from real responses (`npm run openapi:examples`).
 */
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema';
import type { Hono } from 'hono';
import type * as v from 'valibot';
import { statusOf, type ErrorCode } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { ROUTE_SPEC, type RouteSpec } from '../http/operation.ts';
import { manifestActionOverride } from '../manifest/json-schema.ts';
import { registeredComponents } from './components.ts';
import { EXAMPLES } from './examples.ts';

type Json = Record<string, unknown>;

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  400: 'Bad request',
  401: 'Unauthenticated',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Too large',
  429: 'Too many requests',
  451: 'Unavailable for legal reasons',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Unavailable',
};

const TAGS: Record<string, string> = {
  Service: 'Health and this document.',
  Accounts: 'The accounts you belong to and your role in each.',
  'API keys': 'Your own API keys. The raw key is shown once, when it is created.',
  Apps: 'Publishing, releases, rollback and the resources an app declares.',
  Events: "Each app's event log.",
  Secrets: 'Secret values go in and never come out.',
  'App users': "Invitations for an app's own users (not platform members).",
  'Sign-in': 'Passwordless sign-in by e-mail link, sign-up, and the console session.',
  'Device authorization': 'Browser-approved login for the CLI (RFC 8628).',
  Members: 'Who is in an account, with which role, and invitations.',
  Billing:
    'Buying and managing a plan through Stripe: checkout, the customer portal, and the payments webhook.',
  Plans: "An account's plan, usage against its limits, flags, and what a plan change would do.",
  'Routes and domains':
    "An app's aliases: slugs under the apps host and custom domains verified through DNS, and the TLS permission check for a reverse proxy.",
  Jobs: "Running an app's declared jobs on demand.",
  Data: "An app's collections from outside the app: read, filter and page rows; create, change and delete them, validated as `ctx.data` validates. Viewers read; owners, admins and developers write; every change is an event.",
  Files:
    "An app's file stores from outside the app: list files with their uploader, a short-lived download URL (private stores too), delete.",
  Bindings:
    "What an app keeps in its Workers bindings and other hosts' stores: KV namespaces (keys, values), R2 buckets (objects by folder) and queues (depths, purge), as `wrangler kv`, `wrangler r2 object` and `wrangler queues` reach them on Cloudflare. Viewers read; owners, admins and developers change; every change is an event.",
  Operator:
    "Running the server: every account with its plan, usage and flags, plan changes, suspensions and takedowns, the server's health and the operator action log. Operators only (403 for everyone else).",
  Legacy: 'Retired password routes; they answer 410.',
};

/** Errors every route can answer besides its own: unexpected failures, and a database that does not answer. */
const ALWAYS: ErrorCode[] = ['internal_error'];
const WITH_DATABASE: ErrorCode[] = ['service_unavailable'];

/** Security requirements: a key, or the console session (with the CSRF header on mutations). */
function securityOf(security: 'signedIn' | 'session' | 'none', mutation: boolean): Json[] {
  const session = mutation ? { consoleSession: [], csrfHeader: [] } : { consoleSession: [] };
  if (security === 'none') return [];
  return security === 'session' ? [session] : [{ apiKey: [] }, session];
}

/** The error body as one status of one operation can carry it: the codes listed, nothing else. */
function errorSchema(codes: ErrorCode[]): Json {
  return {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', enum: codes },
          message: { type: 'string' },
          details: { type: 'object', additionalProperties: {} },
        },
      },
    },
  };
}

/** A route's marks merged: the operation's, its validators' and its access checks'. */
type Operation = { method: string; path: string; spec: RouteSpec & { errors: ErrorCode[] } };

function collect(api: Hono<Env>): Operation[] {
  const ops = new Map<string, Operation>();
  for (const route of api.routes) {
    if (route.method === 'ALL') continue;
    const key = `${route.method} ${route.path}`;
    const entry = ops.get(key) ?? {
      method: route.method.toLowerCase(),
      path: route.path,
      spec: { errors: [] },
    };
    const spec = (route.handler as { [ROUTE_SPEC]?: RouteSpec })[ROUTE_SPEC];
    if (spec)
      entry.spec = {
        ...entry.spec,
        ...spec,
        errors: [...entry.spec.errors, ...(spec.errors ?? [])],
      };
    ops.set(key, entry);
  }
  return [...ops.values()];
}

export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; [key: string]: unknown };
  [key: string]: unknown;
};

/** The `/openapi.json` document for the routes on `api`. */
export function generateOpenApi(api: Hono<Env>, info: { serverUrl: string }): OpenApiDocument {
  const named = registeredComponents();
  const names = new Map<v.GenericSchema, string>(
    Object.entries(named).map(([name, schema]) => [schema, name]),
  );
  const config: ConversionConfig = {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'ignore',
    definitions: named,
    overrideRef: (ctx) => `#/components/schemas/${ctx.referenceId}`,
    overrideAction: manifestActionOverride,
  };
  const schemaOf = (schema: v.GenericSchema): Json => {
    const name = names.get(schema);
    if (name) return { $ref: `#/components/schemas/${name}` };
    const out = toJsonSchema(schema, config) as Json;
    delete out.$schema;
    delete out.$defs;
    return out;
  };

  const paths: Record<string, Record<string, Json>> = {};
  for (const { method, path, spec } of collect(api)) {
    const oaPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const operationId =
      spec.operationId ??
      `${method}_${oaPath.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`;
    const parameters: Json[] = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (spec.accountHeader) {
      parameters.push({
        name: 'X-Platform-Account-Id',
        in: 'header',
        required: false,
        description: 'The account to act on; without it, your default account.',
        schema: { type: 'string', pattern: '^acct_[0-9a-z]{1,64}$' },
      });
    }
    if (spec.query) {
      const qs = schemaOf(spec.query) as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, schema] of Object.entries(qs.properties ?? {})) {
        parameters.push({
          name,
          in: 'query',
          required: qs.required?.includes(name) ?? false,
          schema,
        });
      }
    }
    const security = spec.security ?? (path.startsWith('/v0/') ? 'signedIn' : 'none');
    const mutation = !['get', 'head', 'options'].includes(method);
    const errors = new Set<ErrorCode>([...spec.errors, ...ALWAYS]);
    if (security !== 'none') errors.add('unauthorized');
    if (security !== 'none' && mutation) errors.add('csrf_rejected');
    // the retired routes answer 410 without touching the database
    if (path.startsWith('/v0/') && !spec.tags?.includes('Legacy'))
      for (const code of WITH_DATABASE) errors.add(code);
    if (spec.accountHeader)
      for (const code of ['invalid_request', 'not_found', 'forbidden'] as const) errors.add(code);

    const responses: Record<string, Json> = {};
    for (const [status, schema] of Object.entries(spec.responses ?? { 200: null })) {
      const example = EXAMPLES.responses[`${operationId} ${status}`];
      responses[status] = spec.text
        ? {
            description: REASONS[Number(status)] ?? 'Success',
            content: {
              [spec.text.contentType]: { schema: { type: 'string' }, example: spec.text.example },
            },
          }
        : schema
          ? {
              description: REASONS[Number(status)] ?? 'Success',
              content: {
                'application/json': {
                  schema: schemaOf(schema),
                  ...(example === undefined ? {} : { example }),
                },
              },
            }
          : { description: REASONS[Number(status)] ?? 'Success' };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errors)
      byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      codes.sort();
      const example = EXAMPLES.responses[`${operationId} ${status}`];
      responses[String(status)] = {
        description: `${REASONS[status] ?? 'Error'}: ${codes.map((c) => `\`${c}\``).join(', ')}`,
        content: {
          'application/json': {
            schema: errorSchema(codes),
            ...(example === undefined ? {} : { example }),
          },
        },
      };
    }

    responses.default = {
      description: 'Any other failure',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    const op: Json = {
      operationId,
      summary: spec.summary ?? `${method.toUpperCase()} ${oaPath}`,
      ...(spec.description ? { description: spec.description } : {}),
      tags: spec.tags ?? ['Service'],
      security: securityOf(security, mutation),
      ...(parameters.length ? { parameters } : {}),
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: schemaOf(spec.body) } },
            },
          }
        : {}),
      responses,
    };
    (paths[oaPath] ??= {})[method] = op;
  }

  const schemas = toJsonSchemaDefs(named, {
    target: config.target,
    typeMode: config.typeMode,
    errorMode: config.errorMode,
    overrideRef: config.overrideRef,
    overrideAction: config.overrideAction,
  }) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    delete schema.$schema;
    delete schema.$defs;
    const example = EXAMPLES.components[name];
    if (example !== undefined) schema.examples = [example];
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Platform control-plane API',
      version: 'v0',
      description:
        'The `/v0` business API of the platform: publish apps, manage releases, secrets, keys and events. Every error answers `{"error": {"code", "message", "details"?}}`; each operation lists the codes each status can carry.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: info.serverUrl }],
    security: [{ apiKey: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key: `Authorization: Bearer ap_...`. Works on the API and console hosts.',
        },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-platform_session',
          description:
            'The console session cookie, set by signing in with an e-mail link. Accepted on the console host only; a bearer key wins when both are sent.',
        },
        csrfHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Platform-CSRF',
          description:
            "The session's `csrf_token` (from `GET /v0/platform/session`), required with the session cookie on every request that is not GET or HEAD.",
        },
      },
      schemas,
    },
  };
}
