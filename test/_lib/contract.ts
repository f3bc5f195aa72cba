/**
 * Holds every response a test receives from the `/v0` surface to `/openapi.json`: the status must
 * be documented for the operation the request matched, and the JSON body must match that status's
 * schema. The harness wraps the server's fetch with `inspect`, so app.request() and real HTTP are
 * both checked without a test writing anything. With PLATFORM_RECORD_EXAMPLES=<dir> it also keeps
 * real bodies as examples for the document (`npm run openapi:examples`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument } from '../../src/openapi/generate.ts';

type Json = Record<string, any>;
type Route = { method: string; template: string; pattern: RegExp; op: Json };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

export type ContractChecker = {
  /** The first mismatch for one response, or null when it fits the document. */
  check(method: string, pathname: string, status: number, body: unknown): string | null;
  /** Keeps a request body that the operation accepted as an example of its named records. */
  recordRequest(method: string, pathname: string, body: unknown): void;
  /** Examples seen so far (only collected when recording). */
  recorded(): { components: Record<string, unknown[]>; responses: Record<string, unknown> };
};

function routesOf(doc: OpenApiDocument): Route[] {
  const routes: Route[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    const pattern = new RegExp(
      `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
    );
    for (const [method, op] of Object.entries(ops))
      routes.push({ method: method.toUpperCase(), template, pattern, op });
  }
  // Literal segments win over parameters, as in the router.
  return routes.sort(
    (a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0),
  );
}

/** Replaces raw credentials in a recorded example with an obvious stand-in of the same shape. */
function scrub(value: unknown): unknown {
  if (typeof value === 'string') {
    if (/^ap_[A-Za-z0-9_-]{43}$/.test(value)) return `ap_${'EXAMPLE'.padEnd(43, '0')}`;
    // long values (file contents in base64, mostly) are cut: an example shows the shape
    return (value.length > 120 ? value.slice(0, 120) : value).replace(
      /#token=[^&\s"]+/g,
      '#token=EXAMPLE',
    );
  }
  if (Array.isArray(value)) return value.slice(0, 2).map(scrub);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)]));
  return value;
}

export function createContractChecker(
  doc: OpenApiDocument,
  options: { record?: boolean } = {},
): ContractChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const routes = routesOf(doc);
  const validators = new Map<string, ValidateFunction>();
  const components = doc.components.schemas as Record<string, Json>;
  const seen = {
    components: {} as Record<string, unknown[]>,
    responses: {} as Record<string, unknown>,
  };

  const validator = (key: string, schema: Json): ValidateFunction => {
    let fn = validators.get(key);
    if (!fn) {
      fn = ajv.compile({ ...schema, components: { schemas: components } });
      validators.set(key, fn);
    }
    return fn;
  };

  // Walks a valid body beside its schema and keeps each named record met on the way.
  const collect = (value: unknown, schema: Json | undefined): void => {
    if (!schema || value === null || value === undefined) return;
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop()!;
      (seen.components[name] ??= []).push(scrub(value));
      collect(value, components[name]);
      return;
    }
    for (const branch of schema.allOf ?? []) collect(value, branch);
    // of a union, only the branch the value is
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
      if (validator(`branch ${JSON.stringify(branch)}`, branch)(value)) collect(value, branch);
    if (Array.isArray(value) && schema.items)
      for (const item of value.slice(0, 2)) collect(item, schema.items);
    if (schema.properties && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, sub] of Object.entries<Json>(schema.properties))
        collect((value as Json)[key], sub);
    }
    if (
      schema.additionalProperties &&
      typeof schema.additionalProperties === 'object' &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      for (const [key, item] of Object.entries(value as Json))
        if (!schema.properties?.[key]) collect(item, schema.additionalProperties);
    }
  };

  return {
    check(method, pathname, status, body) {
      const route = routes.find((r) => r.method === method && r.pattern.test(pathname));
      if (!route) return null; // an undocumented path or method: the router answers 404 for it
      const label = `${method} ${route.template} (${route.op.operationId})`;
      const response = route.op.responses[String(status)];
      if (!response)
        return `${label} answered ${status}, which the document does not list for it (it lists ${Object.keys(route.op.responses).join(', ')})`;
      const schema = response.content?.['application/json']?.schema as Json | undefined;
      if (!schema)
        return body === undefined
          ? null
          : `${label} answered ${status} with a JSON body, but the document lists none`;
      if (method === 'HEAD') return null;
      const validate = validator(`${route.op.operationId} ${status}`, schema);
      if (!validate(body)) {
        const e = validate.errors?.[0];
        return `${label} answered ${status} with a body that does not match the document: ${e?.instancePath || '(root)'} ${e?.message ?? ''} ${e?.params ? JSON.stringify(e.params) : ''}`.trim();
      }
      if (options.record && !['openapi', 'manifestSchema'].includes(route.op.operationId)) {
        seen.responses[`${route.op.operationId} ${status}`] ??= scrub(body);
        collect(body, schema);
        // each status's error schema is inline; the generic Error record (the `default` answer) is the same body
        if (status >= 400) (seen.components.Error ??= []).push(scrub(body));
      }
      return null;
    },
    recordRequest(method, pathname, body) {
      const route = routes.find((r) => r.method === method && r.pattern.test(pathname));
      const schema = route?.op.requestBody?.content?.['application/json']?.schema as
        | Json
        | undefined;
      if (options.record && schema) collect(body, schema);
    },
    recorded: () => seen,
  };
}

/** Writes what one test process recorded, for scripts/openapi-examples.ts to merge. */
export function saveRecorded(dir: string, checker: ContractChecker): void {
  mkdirSync(dir, { recursive: true });
  const file = process.argv[1] ? path.relative(process.cwd(), process.argv[1]) : 'unknown';
  const name = `${file.replace(/[^A-Za-z0-9]+/g, '_')}-${process.pid}-${Date.now()}.json`;
  writeFileSync(path.join(dir, name), JSON.stringify({ file, ...checker.recorded() }));
}
