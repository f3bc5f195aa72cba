/**
 * The guest's code, as the sandbox evaluates it: the prelude (`prelude/`, its parts bundled into one
 * script, whitespace and syntax minified, names
 * kept: every instance compiles it, so fewer bytes are less time), and the lazily loaded parts
 * ("chunks"): each file in `guest/chunks/` is an ES module whose default export installs some
 * globals, bundled with its npm imports by esbuild into one function the prelude calls on first
 * touch of one of those globals. Built once per change of the guest sources or the lockfile, into
 * `node_modules/.cache/platform-guest/`, by whichever process first needs it (`npm install` and
 * `npm start` stay the whole set-up, on Node and on Deno).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-write.mjs';
import { fileURLToPath } from 'node:url';
import { LIBRARY_FIXES_KEY, libraryFixes } from './library-fixes.ts';

const CHUNKS_DIR = fileURLToPath(new URL('./chunks/', import.meta.url));
const PRELUDE_DIR = fileURLToPath(new URL('./prelude/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'platform-guest');

export type GuestChunks = Record<string, string>;
export type GuestCode = { prelude: string; chunks: GuestChunks };

function sourceHash(files: string[]): string {
  const h = createHash('sha256');
  // this file too: a change to how the guest is built is a new build
  h.update(readFileSync(fileURLToPath(import.meta.url)))
    .update('\0')
    .update(LIBRARY_FIXES_KEY);
  for (const f of readdirSync(PRELUDE_DIR).sort())
    h.update(f)
      .update('\0')
      .update(readFileSync(path.join(PRELUDE_DIR, f)))
      .update('\0');
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(path.join(CHUNKS_DIR, f)))
      .update('\0');
  for (const lock of ['package-lock.json', 'package.json']) {
    const p = path.join(ROOT, lock);
    if (existsSync(p)) {
      h.update(readFileSync(p));
      break;
    }
  }
  return h.digest('hex').slice(0, 24);
}

/** The prelude, and each chunk's code: a script whose value is its install function. */
export async function guestCode(): Promise<GuestCode> {
  const files = readdirSync(CHUNKS_DIR)
    .filter((f) => f.endsWith('.js'))
    .sort();
  const cached = path.join(CACHE_DIR, `${sourceHash(files)}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as GuestCode;
  const { build } = await import('esbuild');
  const chunks: GuestChunks = {};
  for (const f of files) {
    const result = await build({
      entryPoints: [path.join(CHUNKS_DIR, f)],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: '__chunk',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      target: 'es2022',
      minify: true,
      // class and function names survive (`DOMException.name`, `fetch.name`), as in a browser
      keepNames: true,
      plugins: [libraryFixes],
      legalComments: 'none',
      logLevel: 'silent',
    });
    // `var __chunk` is local to the wrapper: evaluating the script leaves nothing global behind.
    chunks[f.slice(0, -3)] =
      `(function(){${result.outputFiles[0]!.text}\nreturn __chunk.default;})()`;
  }
  // the prelude's parts bundled in their import order into one script, strict as ES modules are
  // (without keepNames, which would wrap every function: a class refers to itself only from outside
  // its body, so none is renamed)
  const built = await build({
    entryPoints: [path.join(PRELUDE_DIR, 'index.js')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    target: 'es2022',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const prelude = built.outputFiles[0]!.text;
  const out: GuestCode = { prelude, chunks };
  writeFileAtomic(cached, JSON.stringify(out)); // a concurrent builder writes the same content
  return out;
}
