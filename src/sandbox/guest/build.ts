/**
 * The guest's code, as the sandbox evaluates it: `prelude.js` (whitespace and syntax minified, names
 * kept: every instance compiles it, so fewer bytes are less time), and the lazily loaded parts
 * ("chunks"): each file in `guest/chunks/` is an ES module whose default export installs some
 * globals, bundled with its npm imports by esbuild into one function the prelude calls on first
 * touch of one of those globals. Built once per change of the guest sources or the lockfile, into
 * `node_modules/.cache/platform-guest/`, by whichever process first needs it (`npm install` and
 * `npm start` stay the whole set-up, on Node and on Deno).
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CHUNKS_DIR = fileURLToPath(new URL('./chunks/', import.meta.url));
const PRELUDE = fileURLToPath(new URL('./prelude.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'platform-guest');

export type GuestChunks = Record<string, string>;
export type GuestCode = { prelude: string; chunks: GuestChunks };

function sourceHash(files: string[]): string {
  const h = createHash('sha256');
  h.update(readFileSync(PRELUDE)).update('\0');
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
  const { build, transform } = await import('esbuild');
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
      legalComments: 'none',
      logLevel: 'silent',
    });
    // `var __chunk` is local to the wrapper: evaluating the script leaves nothing global behind.
    chunks[f.slice(0, -3)] =
      `(function(){${result.outputFiles[0]!.text}\nreturn __chunk.default;})()`;
  }
  const prelude = (
    await transform(readFileSync(PRELUDE, 'utf8'), {
      minifyWhitespace: true,
      minifySyntax: true,
      target: 'es2022',
      legalComments: 'none',
    })
  ).code;
  const out: GuestCode = { prelude, chunks };
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${cached}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(out));
  renameSync(tmp, cached); // atomic: a concurrent builder writes the same content
  return out;
}
