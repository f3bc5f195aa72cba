/**
 * Manifests and files as stored with a release. The manifest column holds JSON that passed the
 * manifest schema at publish, so reading it back is a cast, done in one named place.
 */
import type { Manifest } from './schema.ts';

/** A stored release's manifest (validated when it was published). */
export function manifestOf(value: unknown): Manifest {
  return value as Manifest;
}

/** Which release files the sandbox's module loader can import: JavaScript, by extension or content type (its SQL twin: `SERVER_SOURCE_SQL`, src/releases/queries.ts). */
export function isServerSource(path: string, contentType: string): boolean {
  return /\.(m?js|cjs)$/.test(path) || /javascript|ecmascript/.test(contentType);
}
