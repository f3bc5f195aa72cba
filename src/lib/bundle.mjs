// @ts-check
/**
 * Where Node does not read TypeScript itself (20, 22), a TypeScript entry runs from an esbuild
 * bundle of our own modules (npm packages stay imports, dynamic imports become chunks) instead of
 * through tsx's loader, whose hooks answer every module's resolve and load from another thread: a
 * service, CLI or test process then starts 1-2 s sooner on Node 20. The bundle is cached in
 * `node_modules/.cache/platform-ts/` and rebuilt when any file it was made from (or this file, or
 * the lockfile) changes. `import.meta.url`, `.dirname` and `.filename` keep naming each module's
 * own source file, so files found next to a module are found. Plain JavaScript: it decides how
 * the TypeScript is read.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeFileAtomic } from './atomic-write.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'platform-ts');
/** Chunks no entry's manifest names are removed once they are this old (another build may be writing them). */
const STALE_MS = 24 * 3600_000;

/**
 * What an entry's bundle is made of and which files it is (its entry file first, then its chunks).
 * @typedef {{ entry: string, hash: string, inputs: string[], files: string[] }} Manifest
 */

/** @param {string} entry an absolute path */
const manifestOf = (entry) =>
  path.join(CACHE_DIR, `${path.relative(ROOT, entry).replace(/[^A-Za-z0-9._-]+/g, '_')}.json`);

/**
 * One hash of these files' names and bytes (a missing file counts as empty): what a cached build
 * was made from. Also the sandbox thread's bundle's (worker-bundle.ts).
 * @param {string[]} files paths relative to the checkout
 * @param {Map<string, string>} [digests] each file's own hash, kept across the calls of one check:
 *   entries share most of their inputs, and the test runner checks over a hundred at once
 */
export function hashFiles(files, digests = new Map()) {
  const h = createHash('sha256');
  for (const f of [...files].sort()) {
    let d = digests.get(f);
    if (d === undefined) {
      const p = path.join(ROOT, f);
      d = createHash('sha256')
        .update(existsSync(p) ? readFileSync(p) : '')
        .digest('hex');
      digests.set(f, d);
    }
    h.update(f).update('\0').update(d).update('\0');
  }
  return h.digest('hex').slice(0, 24);
}

/** @param {string[]} inputs @param {Map<string, string>} [digests] */
const hashOf = (inputs, digests) =>
  hashFiles([...inputs, 'src/lib/bundle.mjs', 'package-lock.json'], digests);

/**
 * How this checkout bundles TypeScript for Node (here, and the sandbox thread's in worker-bundle.ts):
 * our modules in, npm packages left as imports, for the oldest Node supported.
 */
export const NODE_BUNDLE = /** @type {const} */ ({
  absWorkingDir: ROOT,
  bundle: true,
  write: false,
  metafile: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'silent',
});

/**
 * @param {string} entry
 * @param {Map<string, string>} digests
 * @returns {string | undefined} the cached bundle, if it is current
 */
function cached(entry, digests) {
  try {
    /** @type {Manifest} */
    const m = JSON.parse(readFileSync(manifestOf(entry), 'utf8'));
    if (m.entry !== path.relative(ROOT, entry)) return undefined;
    const files = m.files.map((f) => path.join(CACHE_DIR, f));
    if (files.every((f) => existsSync(f)) && hashOf(m.inputs, digests) === m.hash) return files[0];
  } catch {
    // not built yet, or from another layout: build
  }
  return undefined;
}

/**
 * Each module's `import.meta` names its own source file, not the bundle: esbuild's `define` on the
 * module alone (on its syntax tree: a string that spells the words is left as it is), its source
 * map inlined, which the bundle's map follows back to the source.
 * @param {typeof import('esbuild')} esbuild
 */
const placeImportMeta = (esbuild) => ({
  name: 'place-import-meta',
  /** @param {import('esbuild').PluginBuild} build */
  setup(build) {
    build.onLoad({ filter: /\.(ts|mts|mjs|js)$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const loader = /\.m?ts$/.test(args.path) ? 'ts' : 'js';
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta')) return { contents: source, loader };
      const { code } = await esbuild.transform(source, {
        loader,
        sourcefile: args.path,
        sourcemap: 'inline',
        define: {
          'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
          'import.meta.dirname': JSON.stringify(path.dirname(args.path)),
          'import.meta.filename': JSON.stringify(args.path),
        },
      });
      return { contents: code, loader: 'js' };
    });
  },
});

/**
 * Builds the entries in one pass (they share chunks) and records each one's manifest.
 * @param {string[]} entries absolute paths
 * @param {Map<string, string>} digests see `hashFiles`
 * @returns {Promise<Map<string, string>>} each entry's bundle
 */
async function build(entries, digests) {
  /** @type {typeof import('esbuild')} */
  const esbuild = createRequire(import.meta.url)('esbuild');
  const result = await esbuild.build({
    ...NODE_BUNDLE,
    entryPoints: entries,
    splitting: true,
    outdir: CACHE_DIR,
    outbase: ROOT,
    entryNames: '[dir]/[name]-[hash]',
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [placeImportMeta(esbuild)],
  });
  // names carry their content's hash: a concurrent build of the same sources writes the same files
  for (const out of result.outputFiles ?? []) writeFileAtomic(out.path, out.contents);
  const meta = /** @type {import('esbuild').Metafile} */ (result.metafile);
  /** An output and the chunks it imports, transitively. @param {string} out @param {Set<string>} seen */
  const outputsOf = (out, seen = new Set()) => {
    if (seen.has(out) || !meta.outputs[out]) return seen;
    seen.add(out);
    for (const imp of meta.outputs[out].imports) if (!imp.external) outputsOf(imp.path, seen);
    return seen;
  };
  const asked = new Set(entries.map((e) => path.relative(ROOT, e)));
  const made = new Map();
  for (const [out, o] of Object.entries(meta.outputs)) {
    // a dynamic import's chunk names its module as entryPoint too
    if (!o.entryPoint || !asked.has(o.entryPoint)) continue;
    const outs = [...outputsOf(out)];
    const inputs = [...new Set(outs.flatMap((f) => Object.keys(meta.outputs[f]?.inputs ?? {})))];
    const files = outs.map((f) => path.relative(CACHE_DIR, path.join(ROOT, f)));
    /** @type {Manifest} */
    const m = { entry: o.entryPoint, hash: hashOf(inputs.sort(), digests), inputs, files };
    writeFileAtomic(manifestOf(path.join(ROOT, o.entryPoint)), JSON.stringify(m));
    made.set(path.join(ROOT, o.entryPoint), path.join(CACHE_DIR, files[0]));
  }
  prune();
  return made;
}

/** Removes output no manifest names any more, once it is old enough that no build is writing it. */
function prune() {
  const kept = new Set();
  /** @type {string[]} */
  const outputs = [];
  const walk = (/** @type {string} */ dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (dir === CACHE_DIR && e.name.endsWith('.json')) {
        try {
          for (const f of JSON.parse(readFileSync(p, 'utf8')).files)
            kept.add(path.join(CACHE_DIR, f));
        } catch {}
      } else outputs.push(p);
    }
  };
  walk(CACHE_DIR);
  const now = Date.now();
  for (const p of outputs) {
    if (kept.has(p.replace(/\.map$/, ''))) continue;
    try {
      if (now - statSync(p).mtimeMs > STALE_MS) unlinkSync(p);
    } catch {}
  }
}

/**
 * The bundles to run for these TypeScript entries (same order), built where missing or out of date.
 * @param {string[]} entries absolute paths
 * @returns {Promise<string[]>}
 */
export async function bundled(entries) {
  // a file elsewhere would resolve its packages from this checkout's node_modules, not its own
  const outside = entries.find((e) => path.relative(ROOT, e).startsWith('..'));
  if (outside) throw new Error(`${outside} is outside ${ROOT}: not bundled`);
  /** @type {Map<string, string>} */
  const digests = new Map();
  const found = entries.map((e) => cached(e, digests));
  const missing = entries.filter((_, i) => !found[i]);
  const made = missing.length ? await build(missing, digests) : new Map();
  return entries.map((e, i) => {
    const file = found[i] ?? made.get(e);
    if (!file) throw new Error(`no bundle was made for ${e}`);
    return file;
  });
}
