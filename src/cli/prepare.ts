/**
 * What `platform publish` and `platform dev` send: the folder's files and manifest, with the server
 * entry bundled when it needs it (src/cli/build.ts). The user's manifest names their source entry;
 * the publish body names the bundle.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILD_DIR, buildServer, BUNDLE_PATH, type BuildOutput } from './build.ts';
import { checkLimits, collectFiles, MANIFEST, readManifest, type LocalFile } from './bundle.ts';
import { inferManifest, type Inferred } from './infer.ts';
import { CliError } from './output.ts';

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
  let files = await collectFiles(root);
  let runtime = (manifest.runtime ?? {}) as Record<string, unknown>;
  const entry = typeof runtime.server_entry === 'string' ? runtime.server_entry : undefined;
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
    if (!files.some((f) => f.path === entry))
      throw new CliError(
        `The server entry ${entry} (runtime.server_entry) is not among the files to publish.`,
        'invalid_manifest',
      );
    build = await buildServer(root, entry, {
      color: options.color,
      force: serverOnly || runtime.static_root === BUILD_DIR,
    });
  }
  const head: Record<string, unknown> = { ...manifest, runtime };
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
