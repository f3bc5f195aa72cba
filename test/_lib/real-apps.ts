/**
 * A corpus of public apps no one here wrote: Cloudflare's `create-cloudflare` templates
 * (devDependency create-cloudflare, MIT OR Apache-2.0), read from node_modules exactly as the
 * package ships them, with the requests each is compared on against the same code under workerd.
 */
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { type BuildOptions, build } from 'esbuild';

export const TEMPLATES = path.resolve('node_modules/create-cloudflare/templates');

/** One request and how its answers are compared: the same body, or the same shape. */
export type Probe = {
  method?: string;
  path: string;
  body?: unknown;
  /** `exact` (default): status, content type and body equal; `uuid`: a v4 UUID body; `origin`: equal once each side's origin is replaced */
  compare?: 'exact' | 'uuid' | 'origin';
};

export type RealApp = {
  name: string;
  /** the template folder under TEMPLATES */
  dir: string;
  /** packages the app imports (linked from this repository's node_modules, as `npm install` would) */
  packages: string[];
  /** its server entry, bundled for workerd (undefined: an assets-only site, served by the platform alone) */
  entry?: string;
  /** requests answered by the Worker: compared with workerd */
  probes: Probe[];
  /** requests answered by static files: the file's bytes (wrangler serves these; workerd alone does not) */
  files: { path: string; file: string }[];
};

export const CORPUS: RealApp[] = [
  {
    name: 'hello-world-js',
    dir: 'hello-world/js',
    packages: [],
    entry: 'src/index.js',
    probes: [{ path: '/' }, { path: '/anything?x=1' }],
    files: [],
  },
  {
    name: 'hello-world-ts',
    dir: 'hello-world/ts',
    packages: [],
    entry: 'src/index.ts',
    probes: [{ path: '/' }, { method: 'POST', path: '/post', body: { a: 1 } }],
    files: [],
  },
  {
    name: 'hello-world-with-assets',
    dir: 'hello-world-with-assets/js',
    packages: [],
    entry: 'src/index.js',
    probes: [{ path: '/message' }, { path: '/random', compare: 'uuid' }, { path: '/missing' }],
    files: [{ path: '/', file: 'public/index.html' }],
  },
  {
    name: 'hello-world-assets-only',
    dir: 'hello-world-assets-only/templates',
    packages: [],
    probes: [],
    files: [
      // `/index.html` is a 307 to `/`, as Workers answer it (test/cli/html-handling.test.ts)
      { path: '/', file: 'public/index.html' },
    ],
  },
  {
    name: 'scheduled',
    dir: 'scheduled/js',
    packages: [],
    entry: 'src/index.js',
    probes: [{ path: '/', compare: 'origin' }],
    files: [],
  },
  {
    name: 'hono',
    dir: 'hono/workers/templates',
    packages: ['hono'],
    entry: 'src/index.ts',
    probes: [{ path: '/message' }, { path: '/nothing-here' }],
    files: [{ path: '/', file: 'public/index.html' }],
  },
  {
    name: 'openapi-chanfana',
    dir: 'openapi/ts',
    packages: ['hono', 'chanfana', 'zod'],
    entry: 'src/index.ts',
    probes: [
      { path: '/', compare: 'origin' },
      { path: '/openapi.json', compare: 'origin' },
      { path: '/api/tasks?page=2' },
      { path: '/api/tasks?page=x' },
      { path: '/api/tasks/my-task' },
      {
        method: 'POST',
        path: '/api/tasks',
        body: {
          name: 'Ship it',
          slug: 'ship-it',
          description: 'once',
          completed: false,
          due_date: '2026-12-01',
        },
      },
      { method: 'POST', path: '/api/tasks', body: { name: 42 } },
      { method: 'DELETE', path: '/api/tasks/ship-it' },
    ],
    files: [],
  },
];

/** Copies a template into `dest` as `create-cloudflare` lays it out (`__dot__x` files become `.x`). */
export async function materialise(app: RealApp, dest: string): Promise<string> {
  await rm(dest, { recursive: true, force: true });
  await mkdir(path.dirname(dest), { recursive: true });
  await cp(path.join(TEMPLATES, app.dir), dest, { recursive: true });
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.name.startsWith('__dot__'))
        await rename(full, path.join(dir, `.${e.name.slice('__dot__'.length)}`));
    }
  };
  await walk(dest);
  return dest;
}

/** The app's entry bundled into one ES module, as wrangler would hand it to workerd. */
export function bundleForWorkerd(
  folder: string,
  entry: string,
  options: Pick<BuildOptions, 'jsx' | 'jsxImportSource'> = {},
): Promise<string> {
  return build({
    absWorkingDir: folder,
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    logLevel: 'silent',
    ...options,
  }).then((out) => out.outputFiles[0]!.text);
}
