/**
 * Turning a folder into a publish body: `manifest.platform.json` plus every file except the
 * manifest, dot-files and dot-folders the manifest does not name, what no host publishes
 * (`.git`, `.env*`, `.dev.vars`, `.wrangler/`, `node_modules`), `.platformignore` patterns
 * (gitignore syntax) and a static root's `.assetsignore`. Content types come from file extensions. The contract's limits are checked before
 * anything is sent.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import ignore from 'ignore';
import mime from 'mime';
import { mib, RELEASE_LIMITS as LIMITS } from '../manifest/limits.ts';
import { pathProblem } from '../manifest/schema.ts';
import { CliError } from './output.ts';

export const MANIFEST = 'manifest.platform.json';
/** A file to publish: on disk (`abs`) or made by the CLI (`bytes`, the server bundle). */
export type LocalFile = {
  path: string;
  abs: string;
  size: number;
  contentType: string;
  bytes?: Uint8Array;
};

/**
 * A JSON.parse error as a reader wants it: `file:line:column: what` with the line and a caret under the spot.
 * Node 20 says `at position N`, Node 22 and later add `(line L column C)`, the end of input is the end; V8's
 * "Unexpected token" messages name no position (they quote the text instead), so they get none.
 */
export function describeJsonError(file: string, text: string, message: string): string {
  const token = /^Unexpected token '([\s\S]*?)', [\s\S]* is not valid JSON$/.exec(message);
  if (token) return `${file}: not valid JSON: unexpected token ${JSON.stringify(token[1])}`;
  const pos = /at position (\d+)/.exec(message);
  if (!pos && !/Unexpected end of JSON input/.test(message))
    return `${file}: not valid JSON: ${message.split('\n')[0]}`;
  const offset = pos ? Math.min(Number(pos[1]), text.length) : text.length;
  const before = text.slice(0, offset).split('\n');
  const line = before.length;
  const column = before.at(-1)!.length + 1;
  const source = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '');
  const long = source.length > 120;
  const shown = long ? source.slice(Math.max(0, column - 60), column + 60) : source;
  const caret = long ? Math.min(column - 1, 59) : column - 1;
  const what = message
    .replace(/ in JSON at position \d+/, '')
    .replace(/\s*\(line \d+ column \d+\)/, '');
  return `${file}:${line}:${column}: not valid JSON: ${what}\n  ${String(line).padStart(4)} | ${shown}\n       | ${' '.repeat(caret)}^`;
}

export async function readManifest(dir: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST), 'utf8');
  } catch {
    throw new CliError(
      `No ${MANIFEST} in ${path.resolve(dir)}, and nothing to write one from (a wrangler.jsonc or wrangler.toml, deno.json or netlify.toml, a server entry such as src/index.ts, or a public/ folder).`,
      'no_manifest',
      undefined,
      'Run `platform init` to create one.',
    );
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      describeJsonError(MANIFEST, text, (err as Error).message),
      'invalid_manifest',
    );
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new CliError(`${MANIFEST} must be a JSON object.`, 'invalid_manifest');
  const allowed = new Set(['$schema', 'app', 'runtime', 'resources']);
  const extra = Object.keys(manifest).filter((k) => !allowed.has(k));
  if (extra.length)
    throw new CliError(
      `${MANIFEST} has unknown members: ${extra.join(', ')} (allowed: $schema, app, runtime, resources).`,
      'invalid_manifest',
    );
  // `$schema` is for editors; the publish body does not carry it
  const { $schema: _schema, ...published } = manifest as Record<string, unknown>;
  return published;
}

export function contentTypeFor(file: string): string {
  const type = mime.getType(file) ?? 'application/octet-stream';
  return type.startsWith('text/') ||
    type === 'application/javascript' ||
    type === 'application/json'
    ? `${type}; charset=utf-8`
    : type;
}

/** What no host publishes, wherever it is: version control, local secrets, local state. */
function neverPublished(name: string): boolean {
  return (
    name === 'node_modules' ||
    name === '.git' ||
    name === '.hg' ||
    name === '.svn' ||
    name === '.wrangler' ||
    name === '.DS_Store' ||
    name === '.platformignore' ||
    name === '.assetsignore' ||
    name.startsWith('.env') ||
    name.startsWith('.dev.vars')
  );
}

/** gitignore-syntax patterns of a file, if it is there. */
async function ignoreFile(file: string) {
  try {
    return ignore().add(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The folder's files to publish. Dot-files, dot-folders and node_modules are left out, except where the
 * manifest names them (`named`: its static_root and server_entry, as a framework's build writes
 * them to `.svelte-kit/cloudflare` or `.open-next/assets`): what is under a named folder is
 * published whatever its name (`.well-known/`), and what no host publishes never is. A static
 * root's own `.assetsignore` (Workers' static assets syntax) leaves out what it names.
 */
export async function collectFiles(dir: string, named: string[] = []): Promise<LocalFile[]> {
  const root = path.resolve(dir);
  const ig = (await ignoreFile(path.join(root, '.platformignore'))) ?? ignore();
  const named_ = named.map((n) => n.replace(/^\.\//, '').replace(/\/+$/, '')).filter(Boolean);
  const assetIgnores = new Map<string, ReturnType<typeof ignore>>();
  for (const n of named_) {
    const found = await ignoreFile(path.join(root, n, '.assetsignore'));
    if (found) assetIgnores.set(n, found);
  }
  const wanted = (relPath: string) =>
    named_.some((n) => n === relPath || n.startsWith(`${relPath}/`) || relPath.startsWith(`${n}/`));
  const assetIgnored = (relPath: string, isDir: boolean) => {
    for (const [base, patterns] of assetIgnores)
      if (relPath.startsWith(`${base}/`)) {
        const inner = relPath.slice(base.length + 1);
        if (patterns.ignores(isDir ? `${inner}/` : inner)) return true;
      }
    return false;
  };
  const realRoot = await realpath(root);
  const out: LocalFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      // node_modules only on the way to a static root in it (a package's dashboard as a
      // Worker's assets: R2-Explorer's `node_modules/r2-explorer/dashboard`), and what is under it
      const segments = relPath.split('/');
      const inModules = segments.includes('node_modules');
      if (neverPublished(e.name) && !(e.name === 'node_modules' && wanted(relPath))) continue;
      if (inModules && !wanted(relPath)) continue;
      // in a dot-folder, only the way to what the manifest names, and what is under it
      if (segments.some((seg) => seg.startsWith('.')) && !wanted(relPath)) continue;
      if (!rel && e.name === MANIFEST) continue;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        // followed inside the project; one pointing out of it is refused, not silently dropped
        const target = await realpath(path.join(root, relPath)).catch(() => undefined);
        if (!target) continue; // dangling
        if (target !== realRoot && !target.startsWith(`${realRoot}${path.sep}`))
          throw new CliError(
            `${relPath} is a symbolic link to ${target}, outside the project: copy what it points to into the project, or list it in .platformignore.`,
            'invalid_bundle',
          );
        const st = await stat(target);
        isDir = st.isDirectory();
        isFile = st.isFile();
      }
      if (ig.ignores(isDir ? `${relPath}/` : relPath)) continue;
      if (assetIgnored(relPath, isDir)) continue;
      if (isDir) await walk(relPath);
      else if (isFile) {
        const st = await stat(path.join(root, relPath));
        out.push({
          path: relPath,
          abs: path.join(root, relPath),
          size: st.size,
          contentType: contentTypeFor(e.name),
        });
      }
    }
  };
  await walk('');
  return out;
}

/** The `n` largest files, as `path (size)`. */
const largest = (files: LocalFile[], n = 5) =>
  [...files]
    .sort((a, b) => b.size - a.size)
    .slice(0, n)
    .map((f) => `${f.path} (${mib(f.size)})`)
    .join(', ');

/** The folders holding the most files, as `folder/ (count)`. */
function fullest(files: LocalFile[], n = 5): string {
  const counts = new Map<string, number>();
  for (const f of files) {
    const parts = f.path.split('/');
    const folder =
      parts.length > 1 ? `${parts.slice(0, Math.min(2, parts.length - 1)).join('/')}/` : './';
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([folder, count]) => `${folder} (${count})`)
    .join(', ');
}

/** The contract's limits, checked locally so a large mistake is not uploaded first; the offenders named. */
export function checkLimits(files: LocalFile[]): void {
  if (!files.length) throw new CliError('There are no files to publish.', 'invalid_bundle');
  if (files.length > LIMITS.files)
    throw new CliError(
      `${files.length} files; a release has at most ${LIMITS.files}. Most files are in ${fullest(files)}.`,
      'bundle_too_large',
      undefined,
      'Exclude build leftovers with a .platformignore file.',
    );
  const tooBig = files.filter((f) => f.size > LIMITS.fileBytes);
  if (tooBig.length)
    throw new CliError(
      `${tooBig.length === 1 ? `${tooBig[0]!.path} is ${mib(tooBig[0]!.size)}` : `${tooBig.length} files are larger than that: ${largest(tooBig)}`}; a file may be at most ${mib(LIMITS.fileBytes)}.`,
      'bundle_too_large',
    );
  for (const f of files) {
    const problem = pathProblem(f.path);
    if (problem) throw new CliError(`${f.path}: path ${problem}.`, 'invalid_path');
  }
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > LIMITS.totalBytes)
    throw new CliError(
      `The files add up to ${mib(total)}; a release may be at most ${mib(LIMITS.totalBytes)}. The largest: ${largest(files)}.`,
      'bundle_too_large',
    );
}
