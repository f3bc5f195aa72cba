/**
 * Named records of the contract. A schema passed through `component()` appears once under
 * `components.schemas` in `/openapi.json` and is referenced by `$ref` wherever a route uses it.
 * Feature `schemas.ts` files register their records here at import time.
 */
import * as v from 'valibot';

const registry = new Map<string, v.GenericSchema>();

/** Registers `schema` as the component `name` (names are unique) and returns it unchanged. */
export function component<S extends v.GenericSchema>(name: string, schema: S): S {
  const existing = registry.get(name);
  if (existing && existing !== schema)
    throw new Error(`OpenAPI component ${name} is registered twice`);
  registry.set(name, schema);
  return schema;
}

/** Every registered component, by name. */
export function registeredComponents(): Record<string, v.GenericSchema> {
  return Object.fromEntries([...registry].sort(([a], [b]) => a.localeCompare(b)));
}

/** An ISO 8601 date-time as `Date.prototype.toISOString()` writes it. */
export const DateTime = v.pipe(v.string(), v.isoTimestamp());
/** An absolute URL. */
export const Url = v.pipe(v.string(), v.url());
/** A free-form JSON object. */
export const FreeObject = v.record(v.string(), v.unknown());

/** The contract's error body, the same for every failure. */
export const ErrorBody = component(
  'Error',
  v.strictObject({
    error: v.strictObject({
      code: v.string(),
      message: v.string(),
      details: v.optional(FreeObject),
    }),
  }),
);
