import { toJsonSchema } from '@valibot/to-json-schema';
import type { Hono } from 'hono';
import type * as v from 'valibot';
import type { Env } from '../http/env.ts';
import { ROUTE_SPEC, type RouteSpec } from '../http/validate.ts';

type Json = Record<string, unknown>;

function schemaOf(schema: v.GenericSchema, mode: 'input' | 'output'): Json {
  const out = toJsonSchema(schema, { target: 'draft-2020-12', typeMode: mode, errorMode: 'ignore' }) as Json;
  delete out.$schema;
  return out;
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
    },
  },
};

/**
 * OpenAPI 3.1 built from the routes actually registered on `api` and the valibot schemas their
 * validators use, so the document cannot drift from what the server checks.
 */
export function generateOpenApi(api: Hono<Env>, info: { serverUrl: string }): Json {
  const ops = new Map<string, { method: string; path: string; spec: RouteSpec }>();
  for (const route of api.routes) {
    if (route.method === 'ALL') continue;
    const key = `${route.method} ${route.path}`;
    const entry = ops.get(key) ?? { method: route.method.toLowerCase(), path: route.path, spec: {} };
    const spec = (route.handler as { [ROUTE_SPEC]?: RouteSpec })[ROUTE_SPEC];
    if (spec) entry.spec = { ...entry.spec, ...spec };
    ops.set(key, entry);
  }
  const paths: Record<string, Json> = {};
  for (const { method, path, spec } of ops.values()) {
    const params = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
    const oaPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: Json[] = params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    if (spec.query) {
      const qs = schemaOf(spec.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, schema] of Object.entries(qs.properties ?? {})) {
        parameters.push({ name, in: 'query', required: qs.required?.includes(name) ?? false, schema });
      }
    }
    const responses: Record<string, Json> = {};
    for (const [status, r] of Object.entries(spec.responses ?? { 200: { description: 'OK' } })) {
      responses[status] = r.schema
        ? { description: r.description, content: { 'application/json': { schema: schemaOf(r.schema, 'output') } } }
        : { description: r.description };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const op: Json = {
      operationId: `${method}_${oaPath.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      summary: spec.summary ?? `${method.toUpperCase()} ${oaPath}`,
      tags: spec.tags ?? [],
      parameters,
      responses,
    };
    if (spec.description) op.description = spec.description;
    if (spec.auth === false || !path.startsWith('/v0/')) op.security = [];
    if (spec.body) op.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(spec.body, 'input') } } };
    (paths[oaPath] ??= {})[method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Platform control-plane API', version: 'v0' },
    servers: [{ url: info.serverUrl }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: ap_...' } },
      schemas: { Error: ERROR_SCHEMA },
    },
  };
}
