/**
 * Mapping a release's error stacks through the source maps stored with it (`<file>.map`, which the
 * CLI writes beside its bundle). Maps are read and parsed when an error first needs them, then kept
 * in a small LRU: a release's files never change.
 */
import { LRUCache } from 'lru-cache';
import type { TraceMap } from '@jridgewell/trace-mapping';
import type { ReleaseView, RuntimeCaches } from '../releases/live.ts';
import { mapPathOf, mapStack, parseMap } from './map-stack.ts';

const parsed = new LRUCache<string, { map: TraceMap | null }>({ max: 64 });

/** The files a stack names that have a source map in the release. */
function mappedFiles(release: ReleaseView, stack: string): string[] {
  const files = new Set<string>();
  for (const m of stack.matchAll(/([^\s()]+):\d+:\d+/g))
    if (release.files.has(mapPathOf(m[1]!))) files.add(m[1]!);
  return [...files];
}

export async function mapReleaseStack(
  caches: Pick<RuntimeCaches, 'bytes'>,
  release: ReleaseView,
  stack: string | undefined,
): Promise<string | undefined> {
  if (!stack) return stack;
  const files = mappedFiles(release, stack);
  if (!files.length) return stack;
  const maps = new Map<string, TraceMap>();
  for (const file of files) {
    const key = `${release.releaseId}:${file}`;
    let hit = parsed.get(key);
    if (!hit) {
      const bytes = await caches
        .bytes(release.accountId, release.files.get(mapPathOf(file))!)
        .catch(() => undefined);
      hit = { map: (bytes && parseMap(bytes.toString('utf8'))) || null };
      parsed.set(key, hit);
    }
    if (hit.map) maps.set(file, hit.map);
  }
  return mapStack(stack, (file) => maps.get(file));
}

/** The same for a release being published, whose files are still in hand. */
export function mapBundleStack(
  files: { path: string; bytes: Buffer }[],
  stack: string | undefined,
): string | undefined {
  if (!stack) return stack;
  const byPath = new Map(files.map((f) => [f.path, f]));
  const maps = new Map<string, TraceMap | undefined>();
  return mapStack(stack, (file) => {
    if (!maps.has(file)) {
      const f = byPath.get(mapPathOf(file));
      maps.set(file, f ? parseMap(f.bytes.toString('utf8')) : undefined);
    }
    return maps.get(file);
  });
}
