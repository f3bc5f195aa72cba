/**
 * Writes a file whole or not at all: to a temporary name beside it, then renamed over it. The build
 * caches under `node_modules/.cache/` use it, where several processes may build the same file at
 * once: a reader sees one writer's complete content, never a half-written file.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function writeFileAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
