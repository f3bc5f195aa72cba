/**
 * What `platform publish` and `platform dev` send: the folder's files and manifest, with the server
 * entry bundled when it needs it (src/cli/build.ts). The user's manifest names their source entry;
 * the publish body names the bundle.
 */
import path from 'node:path';
import { buildServer, BUNDLE_PATH, type BuildOutput } from './build.ts';
import { checkLimits, collectFiles, readManifest, type LocalFile } from './bundle.ts';
import { CliError } from './output.ts';

export type Prepared = {
  /** the publish body without `files` */
  head: Record<string, unknown>;
  files: LocalFile[];
  total: number;
  manifest: Record<string, unknown>;
  build?: BuildOutput;
};

export async function preparePublish(
  dir: string,
  options: { bundle?: boolean; message?: string; color?: boolean } = {},
): Promise<Prepared> {
  const root = path.resolve(dir);
  const manifest = await readManifest(root);
  let files = await collectFiles(root);
  const runtime = (manifest.runtime ?? {}) as Record<string, unknown>;
  const entry = typeof runtime.server_entry === 'string' ? runtime.server_entry : undefined;
  let build: BuildOutput | undefined;
  if (entry && options.bundle !== false) {
    if (!files.some((f) => f.path === entry))
      throw new CliError(
        `The server entry ${entry} (runtime.server_entry) is not among the files to publish.`,
        'invalid_manifest',
      );
    build = await buildServer(root, entry, { color: options.color });
  }
  const head: Record<string, unknown> = { ...manifest };
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
  return { head, files, total, manifest, ...(build ? { build } : {}) };
}
