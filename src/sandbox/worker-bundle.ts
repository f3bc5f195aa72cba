/**
 * The sandbox thread's code as one ES module file, bundled by esbuild from `worker.ts` and what it
 * imports (npm packages stay imports). Under Node a thread started from the TypeScript sources
 * would start tsx's loader of its own and resolve every module through it, the largest part of a
 * thread's start; from the bundle it loads one file. Built when the sources or the lockfile
 * change, into `node_modules/.cache/platform-sandbox/`, by the first process that needs it (as the
 * guest's code is, guest/build.ts). Deno runs the TypeScript as it is (`worker-entry.mjs`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeFileAtomic } from '../lib/atomic-write.mjs';
import { hashFiles, NODE_BUNDLE } from '../lib/bundle.mjs';

const ENTRY_SOURCES = new URL('./worker-entry.mjs', import.meta.url);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'platform-sandbox');
const MANIFEST = path.join(CACHE_DIR, 'manifest.json');
/** The one module of the thread's graph that finds files next to itself (the guest's sources). */
const LOCATED = 'src/sandbox/guest/build.ts';

type Manifest = { hash: string; inputs: string[]; file: string };

/**
 * What the bundle is made of: its inputs' bytes, this file, the shared build options (bundle.mjs)
 * and the lockfile (esbuild's version).
 */
const hashOf = (inputs: string[]): string =>
  hashFiles([...inputs, 'src/sandbox/worker-bundle.ts', 'src/lib/bundle.mjs', 'package-lock.json']);

function cached(): string | undefined {
  try {
    const m = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
    const file = path.join(CACHE_DIR, m.file);
    // a changed input, or a new import (which changes the file importing it), is a new hash
    if (existsSync(file) && hashOf(m.inputs) === m.hash) return file;
  } catch {
    // no manifest yet, or one from another layout: build
  }
  return undefined;
}

function build(): string {
  // esbuild is a dependency; loaded only when a build is needed
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const result = buildSync({
    ...NODE_BUNDLE,
    entryPoints: ['src/sandbox/worker.ts'],
    outfile: path.join(CACHE_DIR, 'worker.mjs'),
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(ROOT, LOCATED)).href) },
  });
  const inputs = Object.keys(result.metafile!.inputs).sort();
  // `import.meta.url` is defined as LOCATED's for the whole bundle: it must be the only one using it
  for (const f of inputs)
    if (f !== LOCATED && readFileSync(path.join(ROOT, f), 'utf8').includes('import.meta'))
      throw new Error(`${f} uses import.meta: the sandbox thread's bundle cannot place it`);
  const hash = hashOf(inputs);
  const file = `worker-${hash}.mjs`;
  const code = result.outputFiles!.find((o) => o.path.endsWith('.mjs'))!.text;
  const map = result.outputFiles!.find((o) => o.path.endsWith('.map'))!.text;
  // a concurrent builder writes the same content under the same names
  const put = (name: string, text: string) => writeFileAtomic(path.join(CACHE_DIR, name), text);
  put(`${file}.map`, map.replace('"worker.mjs"', JSON.stringify(file)));
  put(
    file,
    code.replace(
      /\/\/# sourceMappingURL=worker\.mjs\.map\s*$/,
      `//# sourceMappingURL=${file}.map\n`,
    ),
  );
  put('manifest.json', JSON.stringify({ hash, inputs, file } satisfies Manifest));
  return path.join(CACHE_DIR, file);
}

/** The bundle's path: the one in the cache when it is current, else a new build. */
export function workerBundle(): string {
  return cached() ?? build();
}

let url: URL | undefined;

/**
 * The module a sandbox thread starts from: the bundle under Node, the TypeScript entry under Deno.
 * Where the bundle cannot be written (a read-only `node_modules`), the entry too: it registers tsx
 * in the thread, slower to start and the same code.
 */
export function sandboxWorkerUrl(): URL {
  if ('Deno' in globalThis) return ENTRY_SOURCES;
  if (url) return url;
  try {
    url = pathToFileURL(workerBundle());
  } catch (err) {
    process.emitWarning(
      `the sandbox thread's bundle could not be built (${String(err)}); threads start from the sources`,
    );
    url = ENTRY_SOURCES;
  }
  return url;
}

/**
 * The process's flags for a sandbox thread, less TypeScript loaders (`--import tsx` and the like):
 * the bundle is JavaScript, and a loader would start again in every thread for nothing.
 */
export function sandboxWorkerExecArgv(argv = process.execArgv): string[] | undefined {
  if ('Deno' in globalThis) return undefined;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const loader = /^--(import|require|loader|experimental-loader)(=|$)/.exec(a);
    if (!loader) {
      out.push(a);
      continue;
    }
    const value = loader[2] === '=' ? a.slice(a.indexOf('=') + 1) : argv[++i];
    if (!/(^|\/)tsx(\/|$)/.test(value ?? '')) out.push(...(loader[2] === '=' ? [a] : [a, value!]));
  }
  return out;
}
