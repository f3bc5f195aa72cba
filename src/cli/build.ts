/**
 * Building the server entry with esbuild when the sandbox could not load it as written: a
 * TypeScript/JSX entry, or one that imports packages from `node_modules`. The bundle and its source
 * map go to `.platform/build/` in the release (never served as static files, docs/decisions/cli-and-dev.md
 * "Bundling"); the manifest the user wrote keeps naming their source entry.
 */
import path from 'node:path';
import { build, formatMessages, version as esbuildVersion, type Message } from 'esbuild';
import { cloudflareModules, explainCloudflareExport } from './cloudflare-modules.ts';
import { denoResolution } from './deno-resolve.ts';
import { nodeCompat } from './node-compat/plugin.ts';
import { CliError } from './output.ts';
import { hoistYieldFromForOf } from './quickjs-workarounds.ts';
import type { WorkersRuntime } from './wrangler-config.ts';

export const BUILD_DIR = '.platform/build';
export const BUNDLE_PATH = `${BUILD_DIR}/server.js`;
export const SOURCE_MAP_PATH = `${BUNDLE_PATH}.map`;

export type BuildOutput = {
  /** the release files the build adds: the bundle and its source map */
  files: { path: string; bytes: Uint8Array; contentType: string }[];
  /** the folder's own files the bundle holds (relative, `/`-separated): server source, not for upload */
  inputs: Set<string>;
  provenance: { tool: string; entry: string; inputs: number };
  /** Node modules with no meaning here that loaded as stubs (the config's `nodejs_compat`) */
  stubbed: string[];
};

/** esbuild's error messages as a compiler prints them (file:line:column, the line, a caret). */
export class BuildError extends CliError {
  readonly pretty: string;
  constructor(pretty: string, count: number) {
    super(
      `The server entry did not build (${count} error${count === 1 ? '' : 's'}).`,
      'build_failed',
    );
    this.pretty = pretty;
  }
}

const SOURCE_EXT = /\.(tsx?|mts|cts|jsx)$/;

/**
 * Bundles `entry` (relative to `root`) when it needs it; undefined when the entry is plain
 * JavaScript with only relative imports of the folder's own files (published as it is).
 * Deterministic: the same sources give the same bytes, so a republish stores nothing new.
 */
/** The bundle with the rewrites the engine needs (quickjs-workarounds.ts); the same bytes when none applies. */
function withEngineWorkarounds(bytes: Uint8Array): Uint8Array {
  const code = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const fixed = hoistYieldFromForOf(code);
  return fixed === code ? bytes : new TextEncoder().encode(fixed);
}

export async function buildServer(
  root: string,
  entry: string,
  options: {
    force?: boolean;
    color?: boolean;
    /** from a Workers project's config (wrangler-config.ts); undefined for a project without one */
    workers?: WorkersRuntime;
  } = {},
): Promise<BuildOutput | undefined> {
  let result;
  const deno = denoResolution(root);
  const stubbed = new Set<string>();
  const plugins = [
    cloudflareModules({ inertDurableObjects: options.workers !== undefined }),
    deno.plugin,
    nodeCompat({ stubs: options.workers?.nodejsCompat, stubbed }),
  ];
  try {
    result = await build({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile: BUNDLE_PATH,
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      // no Node built-ins in the sandbox: packages pick their web or worker builds
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['browser', 'module', 'main'],
      resolveExtensions: ['.ts', '.tsx', '.mts', '.js', '.jsx', '.mjs', '.cjs', '.json'],
      // what the sandbox's QuickJS parses
      target: 'es2023',
      sourcemap: 'external',
      sourcesContent: false,
      legalComments: 'none',
      charset: 'utf8',
      logLevel: 'silent',
      // Node's `global` is globalThis; Buffer, setImmediate and process are the sandbox's own globals
      define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
      // deno.json's import map, npm: and jsr: specifiers and JSX settings (deno-resolve.ts);
      // Node's built-ins from polyfills, as Cloudflare's nodejs_compat (node-compat/plugin.ts)
      plugins,
      ...deno.options,
    });
  } catch (err) {
    const messages = (err as { errors?: Message[] }).errors?.map(explainCloudflareExport);
    if (!messages?.length) throw err;
    const pretty = (
      await formatMessages(messages, { kind: 'error', color: options.color ?? false })
    ).join('');
    throw new BuildError(pretty, messages.length);
  }
  // what went into the bundle (the globals file is offered to every build, used by few)
  const used = result.metafile!.outputs[BUNDLE_PATH]?.inputs;
  const inputs = used
    ? Object.entries(used)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([p]) => p)
    : Object.keys(result.metafile!.inputs);
  // a package, a TypeScript/JSX/JSON module or a file outside the folder: the sandbox cannot load it as written
  const needed =
    options.force ||
    inputs.some(
      (p) =>
        SOURCE_EXT.test(p) ||
        p.endsWith('.json') ||
        p.startsWith('../') ||
        p.split('/').includes('node_modules'),
    );
  if (!needed) return undefined;
  const files: BuildOutput['files'] = [];
  for (const out of result.outputFiles!) {
    const rel = path.relative(root, out.path).split(path.sep).join('/');
    if (rel === BUNDLE_PATH)
      files.push({
        path: BUNDLE_PATH,
        bytes: withEngineWorkarounds(out.contents),
        contentType: 'text/javascript; charset=utf-8',
      });
    else if (rel === SOURCE_MAP_PATH)
      files.push({ path: SOURCE_MAP_PATH, bytes: out.contents, contentType: 'application/json' });
  }
  const own = inputs.filter((p) => !p.startsWith('../') && !p.split('/').includes('node_modules'));
  return {
    files,
    inputs: new Set(own),
    provenance: { tool: `esbuild ${esbuildVersion}`, entry, inputs: inputs.length },
    stubbed: [...stubbed].sort(),
  };
}
