/**
 * Stack traces in the user's own files: a frame in a bundle the CLI built
 * (`.platform/build/server.js:1234:17`) becomes the source position its source map names
 * (`src/routes/users.ts:42:13`). Only ever called when an error happened, never on the request path.
 */
import path from 'node:path';
import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';

export type MapLookup = (file: string) => TraceMap | undefined;

/** The path of the source map that belongs to a release file, by the CLI's convention. */
export const mapPathOf = (file: string) => `${file}.map`;

/** A parsed source map, or undefined when the text is not one. */
export function parseMap(text: string): TraceMap | undefined {
  try {
    return new TraceMap(text);
  } catch {
    return undefined;
  }
}

// `file:line:column` as QuickJS prints it (1-based line and column), inside `(...)` or after `at `
const POSITION = /([^\s()]+):(\d+):(\d+)/g;

/** One `file:line:column` in terms of the original source, or undefined when the map has no answer. */
export function originalOf(
  lookup: MapLookup,
  file: string,
  line: number,
  column: number,
): { file: string; line: number; column: number; name: string | null } | undefined {
  const map = lookup(file);
  if (!map) return undefined;
  const pos = originalPositionFor(map, { line, column: Math.max(0, column - 1) });
  if (pos.source === null || pos.line === null || pos.column === null) return undefined;
  // sources are relative to the map's folder: `../../src/server.ts` from `.platform/build/`
  const source = path.posix
    .normalize(path.posix.join(path.posix.dirname(file), pos.source))
    .replace(/^(\.\.\/)+/, '');
  return { file: source, line: pos.line, column: pos.column + 1, name: pos.name };
}

/** Rewrites every position a map knows; everything else in the stack is kept as it is. */
export function mapStack(stack: string, lookup: MapLookup): string {
  return stack
    .split('\n')
    .map((line) => {
      if (!/^\s*at\s/.test(line)) return line;
      let mapped: ReturnType<typeof originalOf>;
      const rewritten = line.replace(POSITION, (whole, file: string, l: string, c: string) => {
        mapped = originalOf(lookup, file, Number(l), Number(c));
        return mapped ? `${mapped.file}:${mapped.line}:${mapped.column}` : whole;
      });
      // the minifier-free bundle keeps names, but a map's own name wins when it has one
      return mapped?.name
        ? rewritten.replace(/^(\s*at\s+)[^\s(]+(\s+\()/, `$1${mapped.name}$2`)
        : rewritten;
    })
    .join('\n');
}

/** The first frame of a mapped stack that is the user's own code (not node_modules), for one-line summaries. */
export function firstOwnFrame(stack: string): string | undefined {
  for (const m of stack.matchAll(POSITION))
    if (!m[1]!.includes('node_modules/') && !m[1]!.startsWith('.platform/'))
      return `${m[1]}:${m[2]}:${m[3]}`;
  return undefined;
}
