/**
 * Turning a folder into a publish body: `manifest.platform.json` plus every file except the
 * manifest, dot-files and dot-folders, `node_modules` and `.platformignore` patterns (gitignore
 * syntax). Content types come from file extensions. The contract's limits are checked before
 * anything is sent.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
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
      `No ${MANIFEST} in ${path.resolve(dir)}, and nothing to write one from (a wrangler.toml, deno.json or netlify.toml, a server entry such as src/index.ts, or a public/ folder).`,
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

export async function collectFiles(dir: string): Promise<LocalFile[]> {
  const root = path.resolve(dir);
  const ig = ignore();
  try {
    ig.add(await readFile(path.join(root, '.platformignore'), 'utf8'));
  } catch {
    // no ignore file
  }
  const out: LocalFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (!rel && e.name === MANIFEST) continue;
      if (ig.ignores(e.isDirectory() ? `${relPath}/` : relPath)) continue;
      if (e.isDirectory()) await walk(relPath);
      else if (e.isFile()) {
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

/** The contract's limits, checked locally so a large mistake is not uploaded first. */
export function checkLimits(files: LocalFile[]): void {
  if (!files.length) throw new CliError('There are no files to publish.', 'invalid_bundle');
  if (files.length > LIMITS.files)
    throw new CliError(
      `${files.length} files; a release has at most ${LIMITS.files}.`,
      'bundle_too_large',
      undefined,
      'Exclude build leftovers with a .platformignore file.',
    );
  for (const f of files) {
    if (f.size > LIMITS.fileBytes)
      throw new CliError(
        `${f.path} is ${mib(f.size)}; a file may be at most ${mib(LIMITS.fileBytes)}.`,
        'bundle_too_large',
      );
    const problem = pathProblem(f.path);
    if (problem) throw new CliError(`${f.path}: path ${problem}.`, 'invalid_path');
  }
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > LIMITS.totalBytes)
    throw new CliError(
      `The files add up to ${mib(total)}; a release may be at most ${mib(LIMITS.totalBytes)}.`,
      'bundle_too_large',
    );
}
