/**
 * What `platform publish` and `platform dev` send: the folder's files and manifest, with the server
 * entry bundled when it needs it (src/cli/build.ts). The user's manifest names their source entry;
 * the publish body names the bundle.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILD_DIR, buildServer, BUNDLE_PATH, type BuildOutput } from './build.ts';
import { checkLimits, collectFiles, MANIFEST, readManifest, type LocalFile } from './bundle.ts';
import { inferManifest, type Inferred } from './infer.ts';
import {
  d1MigrationDirs,
  workersAssetSettings,
  workersBindings,
  workersRuntime,
} from './wrangler-config.ts';
import { BINDINGS_PATH, D1_MIGRATIONS_PREFIX } from '../bindings/declared.ts';
import { WORKERS_ASSETS_PATH } from '../releases/asset-rules.ts';
import { CliError } from './output.ts';
import { readFileSync } from 'node:fs';

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

export type Prepared = {
  /** the publish body without `files` */
  head: Record<string, unknown>;
  files: LocalFile[];
  total: number;
  manifest: Record<string, unknown>;
  build?: BuildOutput;
  /** the manifest written for a folder that had none, from what it holds */
  inferred?: Inferred;
  /** what the CLI did for the contract on the user's behalf, to say so */
  notes: string[];
};

export async function preparePublish(
  dir: string,
  options: { bundle?: boolean; message?: string; color?: boolean } = {},
): Promise<Prepared> {
  const root = path.resolve(dir);
  let inferred: Inferred | undefined;
  if (!existsSync(path.join(root, MANIFEST))) {
    inferred = inferManifest(root);
    if (inferred)
      await writeFile(path.join(root, MANIFEST), `${JSON.stringify(inferred.manifest, null, 2)}\n`);
  }
  const manifest = await readManifest(root);
  let runtime = (manifest.runtime ?? {}) as Record<string, unknown>;
  const entry = typeof runtime.server_entry === 'string' ? runtime.server_entry : undefined;
  const named = [runtime.static_root, entry].filter((x): x is string => typeof x === 'string');
  let files = await collectFiles(root, named);
  const notes: string[] = [];
  // An app answered by its server alone: the contract's static_root names the build output, which
  // the app origin never serves, so no file shadows a route and no source is served.
  const root_ = typeof runtime.static_root === 'string' ? runtime.static_root : undefined;
  const serverOnly =
    entry !== undefined &&
    options.bundle !== false &&
    (root_ === undefined ||
      (!root_.startsWith('.platform') &&
        !files.some((f) => f.path === root_ || f.path.startsWith(`${root_}/`))));
  if (serverOnly) {
    runtime = { ...runtime, static_root: BUILD_DIR };
    notes.push(
      root_ === undefined
        ? `No static_root: the server answers every request (static_root is ${BUILD_DIR}, which serves nothing).`
        : `static_root "${root_}" holds no files: the server answers every request (static_root is ${BUILD_DIR}, which serves nothing).`,
    );
  }
  let build: BuildOutput | undefined;
  if (entry && options.bundle !== false) {
    // read from disk by the bundler: it may be a file the static root's .assetsignore leaves out
    if (!isFile(path.join(root, entry)))
      throw new CliError(
        `The server entry ${entry} (runtime.server_entry${inferred ? `, from ${inferred.from}` : ''}) does not exist in ${root}.`,
        'invalid_manifest',
      );
    build = await buildServer(root, entry, {
      color: options.color,
      workers: workersRuntime(root),
      // an entry left out of the files (a static root's .assetsignore) reaches the release as the bundle
      force:
        serverOnly || runtime.static_root === BUILD_DIR || !files.some((f) => f.path === entry),
    });
  }
  const head: Record<string, unknown> = { ...manifest, runtime };
  if (build?.stubbed.length)
    notes.push(
      `nodejs_compat: ${build.stubbed.map((m) => `node:${m}`).join(', ')} load${build.stubbed.length === 1 ? 's' : ''} as stubs here (no files, sockets or processes); a call fails when it runs, naming the function`,
    );
  if (build) {
    // Server source stays private: the files the bundle holds are not uploaded, unless they are
    // also static files under static_root.
    const staticRoot =
      typeof runtime.static_root === 'string' ? `${runtime.static_root}/` : undefined;
    files = files.filter(
      (f) =>
        !build!.inputs.has(f.path) || (staticRoot !== undefined && f.path.startsWith(staticRoot)),
    );
    for (const out of build.files)
      files.push({
        path: out.path,
        abs: '',
        size: out.bytes.length,
        contentType: out.contentType,
        bytes: out.bytes,
      });
    head.runtime = { ...runtime, server_entry: BUNDLE_PATH };
  }
  // a Workers project's assets settings travel with the release (the contract's runtime has no member for them)
  const workersAssets = workersAssetSettings(root);
  if (workersAssets) {
    const bytes = new TextEncoder().encode(`${JSON.stringify(workersAssets)}\n`);
    files.push({
      path: WORKERS_ASSETS_PATH,
      abs: '',
      size: bytes.length,
      contentType: 'application/json',
      bytes,
    });
  }
  // so do its bindings (KV namespaces): the publish body keeps exactly the contract's members
  const bindings = workersBindings(root);
  if (bindings) {
    const kv = bindings.kv_namespaces.map((k) => k.binding);
    if (kv.length)
      notes.push(
        `KV namespace${kv.length > 1 ? 's' : ''} ${kv.join(', ')}: kept by the platform for this app, across releases (${BINDINGS_PATH})`,
      );
    const buckets = bindings.r2_buckets.map((b) => String(b.bucket_name));
    if (buckets.length)
      notes.push(
        `R2 bucket${buckets.length > 1 ? 's' : ''} ${buckets.join(', ')}: kept by the platform for this app, across releases (${BINDINGS_PATH})`,
      );
    const databases = bindings.d1_databases.map((b) => String(b.database_name));
    if (databases.length)
      notes.push(
        `D1 database${databases.length > 1 ? 's' : ''} ${databases.join(', ')}: SQLite kept by the platform for this app, across releases (${BINDINGS_PATH})`,
      );
    const queues = [
      ...new Set(
        [...bindings.queues.producers, ...bindings.queues.consumers].map((q) => String(q.queue)),
      ),
    ];
    if (queues.length)
      notes.push(
        `queue${queues.length > 1 ? 's' : ''} ${queues.join(', ')}: kept and delivered by the platform for this app (${BINDINGS_PATH})`,
      );
    // each D1 binding's migrations travel with the release, applied at publish (never served)
    for (const m of d1MigrationDirs(root)) {
      if (!existsSync(m.dir)) continue;
      const sqls = readdirSync(m.dir)
        .filter((f) => f.endsWith('.sql'))
        .sort();
      for (const f of sqls) {
        const bytes = readFileSync(path.join(m.dir, f));
        files.push({
          path: `${D1_MIGRATIONS_PREFIX}${m.binding}/${f}`,
          abs: '',
          size: bytes.length,
          contentType: 'application/sql',
          bytes,
        });
      }
      if (sqls.length)
        notes.push(
          `${sqls.length} D1 migration${sqls.length > 1 ? 's' : ''} of ${m.binding} (${path.relative(root, m.dir) || '.'}): applied at publish, before the release goes live`,
        );
    }
    const bytes = new TextEncoder().encode(`${JSON.stringify(bindings)}\n`);
    files.push({
      path: BINDINGS_PATH,
      abs: '',
      size: bytes.length,
      contentType: 'application/json',
      bytes,
    });
  }
  if (usesDenoKv(root, files))
    notes.push('Deno KV (Deno.openKv): kept by the platform for this app, across releases');
  checkLimits(files);
  const total = files.reduce((n, f) => n + f.size, 0);
  if (options.message) head.message = options.message;
  head.provenance = {
    client: 'platform-cli',
    files: files.length,
    bytes: total,
    ...(build ? { build: { ...build.provenance } } : {}),
  };
  return {
    head,
    files,
    total,
    manifest,
    notes,
    ...(build ? { build } : {}),
    ...(inferred ? { inferred } : {}),
  };
}

/** Whether a Deno project's code opens Deno KV (its deno.json asks for `kv`, or its entry calls it). */
function usesDenoKv(root: string, files: LocalFile[]): boolean {
  if (!existsSync(path.join(root, 'deno.json')) && !existsSync(path.join(root, 'deno.jsonc')))
    return false;
  return files.some((f) => {
    if (!/\.(m?[jt]sx?)$/.test(f.path)) return false;
    const text = f.bytes ? new TextDecoder().decode(f.bytes) : readFileSync(f.abs, 'utf8');
    return text.includes('Deno.openKv');
  });
}
