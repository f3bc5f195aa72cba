/**
 * The manifest's own JSON Schema (v0), generated from the valibot schemas that validate publishes,
 * served at `/schemas/manifest.v0.json` so editors check `manifest.platform.json` through `$schema`.
 * Rules that need the whole bundle (paths that must match files, cross-references) stay server-side.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { manifestActionOverride } from '../manifest/json-schema.ts';
import { AppManifest, ResourceManifest, RuntimeManifest } from '../manifest/schema.ts';
import { registeredComponents } from '../openapi/components.ts';

export const MANIFEST_SCHEMA_PATH = '/schemas/manifest.v0.json';

const ManifestFile = v.strictObject({
  $schema: v.optional(v.string()),
  app: AppManifest,
  runtime: RuntimeManifest,
  resources: v.optional(ResourceManifest),
});

const cached = new Map<string, Record<string, unknown>>();

/** The schema as served from `baseUrl` (its `$id`). */
export function manifestSchema(baseUrl: string): Record<string, unknown> {
  const hit = cached.get(baseUrl);
  if (hit) return hit;
  const out = toJsonSchema(ManifestFile, {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'ignore',
    definitions: registeredComponents(),
    overrideAction: manifestActionOverride,
  }) as Record<string, unknown>;
  // only the definitions the manifest uses (the registry also holds API records)
  const used = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
      const name = ref.slice(8);
      if (!used.has(name)) {
        used.add(name);
        walk((out.$defs as Record<string, unknown>)[name]);
      }
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk({ ...out, $defs: undefined });
  const defs = Object.fromEntries(
    Object.entries((out.$defs ?? {}) as Record<string, unknown>).filter(([name]) => used.has(name)),
  );
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${baseUrl}${MANIFEST_SCHEMA_PATH}`,
    title: 'manifest.platform.json (v0)',
    description:
      'The app manifest: app metadata, runtime settings and resource declarations. The publish request adds files, a message and provenance to it.',
    ...Object.fromEntries(Object.entries(out).filter(([k]) => k !== '$schema' && k !== '$defs')),
    $defs: defs,
  };
  cached.set(baseUrl, schema);
  return schema;
}
