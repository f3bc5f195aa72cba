// @ts-check
/**
 * Writes a file whole or not at all: to a temporary name beside it, then renamed over it. The build
 * caches under `node_modules/.cache/` use it, where several processes may build the same file at
 * once: a reader sees one writer's complete content, never a half-written file. Plain JavaScript:
 * the launcher's bundle cache (bundle.mjs) uses it before any TypeScript can be read.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** @param {string} file @param {string | Uint8Array} data */
export function writeFileAtomic(file, data) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}
