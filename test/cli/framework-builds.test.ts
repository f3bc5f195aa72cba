/**
 * What frameworks' Cloudflare adapters write, published as it is: build output in a dot-folder
 * (SvelteKit's `.svelte-kit/cloudflare`, OpenNext's `.open-next`) with its `.assetsignore`, the
 * Cloudflare Vite plugin's deploy config behind `.wrangler/deploy/config.json`, a deno.json
 * package entry's subpaths, a guarded dynamic remote import; and the mistakes that stop a publish
 * with one line that says what is wrong and where. The shapes are the adapters' own (file names,
 * config members); the code in them is small.
 */
import { readFile, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, linkPackages, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-frameworks-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

const project = (name: string, files: Record<string, string>) => writeProject(work, name, files);
const appOf = linkedApp;
const visit = (appId: string, p: string) => h.call('GET', p, { host: `${appId}.apps.localhost` });
async function publishedPaths(appId: string): Promise<string[]> {
  const app = await h.deps.db
    .selectFrom('apps')
    .select('live_release_id')
    .where('id', '=', appId)
    .executeTakeFirstOrThrow();
  const rows = await h.deps.db
    .selectFrom('release_files')
    .select('path')
    .where('release_id', '=', app.live_release_id!)
    .execute();
  return rows.map((r) => r.path).sort();
}

/** A Worker as adapters emit it: static files from env.ASSETS, the rest answered here. */
const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/api/hello') return Response.json({ hello: 'from the worker' });
    const asset = await env.ASSETS.fetch(request);
    if (asset.status !== 404) return asset;
    return new Response('rendered ' + url.pathname, { headers: { 'content-type': 'text/html' } });
  },
};
`;
/** What no host publishes, beside the build. */
const LOCAL = {
  '.env': 'SECRET=never-published\n',
  '.dev.vars': 'TOKEN=never-published\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.wrangler/state/v3/cache.json': '{}',
};

test("SvelteKit's adapter output (.svelte-kit/cloudflare, _worker.js, .assetsignore) publishes as it is", async () => {
  const dir = await project('sveltekit', {
    ...LOCAL,
    'wrangler.jsonc': `// written by sv create
{
  "name": "my-svelte-app",
  "main": ".svelte-kit/cloudflare/_worker.js",
  "compatibility_date": "2025-01-01",
  "assets": { "binding": "ASSETS", "directory": ".svelte-kit/cloudflare" },
}`,
    'package.json': JSON.stringify({ name: 'my-svelte-app', private: true }),
    '.svelte-kit/cloudflare/_worker.js': WORKER,
    '.svelte-kit/cloudflare/.assetsignore': '_worker.js\n_routes.json\n',
    '.svelte-kit/cloudflare/_routes.json': '{"version":1}',
    '.svelte-kit/cloudflare/_app/immutable/entry/start.js': 'export const start = 1;\n',
    '.svelte-kit/cloudflare/favicon.png': 'png',
    '.svelte-kit/cloudflare/.well-known/security.txt': 'Contact: mailto:security@example.com\n',
    '.svelte-kit/output/server/index.js': 'export const server = 1;\n',
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  assert.is(
    (await visit(appId, '/_app/immutable/entry/start.js')).text,
    'export const start = 1;\n',
  );
  assert.match((await visit(appId, '/.well-known/security.txt')).text, 'Contact:');
  assert.equal((await visit(appId, '/api/hello')).body, { hello: 'from the worker' });
  assert.is((await visit(appId, '/about')).text, 'rendered /about');
  const worker = await visit(appId, '/_worker.js');
  assert.is(worker.text, 'rendered /_worker.js', 'the Worker is not served as a file');
  const paths = await publishedPaths(appId);
  for (const never of ['.env', '.dev.vars', '.git/HEAD', '.wrangler/state/v3/cache.json'])
    assert.not.ok(paths.includes(never), `${never} is never published`);
  assert.not.ok(
    paths.some((p) => p.endsWith('_worker.js')),
    'server source stays private',
  );
  assert.not.ok(
    paths.some((p) => p.endsWith('_routes.json')),
    '.assetsignore is honoured',
  );
  assert.not.ok(
    paths.some((p) => p.startsWith('.svelte-kit/output/')),
    'only what the config names',
  );
});

test("OpenNext's output (.open-next/worker.js and .open-next/assets) publishes as it is", async () => {
  const dir = await project('opennext', {
    ...LOCAL,
    'wrangler.jsonc': JSON.stringify({
      main: '.open-next/worker.js',
      name: 'next-app',
      compatibility_flags: ['nodejs_compat'],
      assets: { directory: '.open-next/assets', binding: 'ASSETS' },
    }),
    '.open-next/worker.js': WORKER,
    '.open-next/assets/_next/static/chunks/main.js': 'console.log("next")\n',
    '.open-next/assets/BUILD_ID': 'abc123',
    '.open-next/cache/fetch-cache.json': '{}',
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/_next/static/chunks/main.js')).text, 'console.log("next")\n');
  assert.equal((await visit(appId, '/api/hello')).body, { hello: 'from the worker' });
  assert.is((await visit(appId, '/')).text, 'rendered /');
});

test("the Cloudflare Vite plugin's deploy config, behind .wrangler/deploy/config.json, is the one read", async () => {
  const dir = await project('vite-plugin', {
    'wrangler.jsonc': JSON.stringify({
      name: 'react-app',
      main: 'worker/index.ts',
      assets: { not_found_handling: 'single-page-application' },
    }),
    'worker/index.ts': 'export default { fetch() { return new Response("source, not built") } };\n',
    '.wrangler/deploy/config.json': JSON.stringify({
      configPath: '../../dist/react_app/wrangler.json',
    }),
    'dist/react_app/wrangler.json': JSON.stringify({
      name: 'react-app',
      main: 'index.js',
      assets: { directory: '../client', not_found_handling: 'single-page-application' },
    }),
    'dist/react_app/index.js': WORKER,
    'dist/client/index.html': '<!doctype html><div id="root">vite app</div>',
    'dist/client/assets/index-abc.js': 'console.log("vite")\n',
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'dist/react_app/wrangler.json');
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.platform.json'), 'utf8'));
  assert.equal(manifest.runtime, {
    static_root: 'dist/client',
    server_entry: 'dist/react_app/index.js',
    fallback: 'server',
  });
  const appId = await appOf(dir);
  assert.match((await visit(appId, '/')).text, 'vite app');
  assert.is((await visit(appId, '/assets/index-abc.js')).text, 'console.log("vite")\n');
  assert.equal((await visit(appId, '/api/hello')).body, { hello: 'from the worker' });
});

test("Workers' asset rules: a navigation gets the SPA's index.html before the Worker; /page serves page.html", async () => {
  // create-cloudflare's React template: the Worker answers /api/ and 404 for the rest
  const dir = await project('react-spa', {
    'wrangler.jsonc': JSON.stringify({
      name: 'react-spa',
      main: 'worker/index.js',
      assets: { directory: './dist', not_found_handling: 'single-page-application' },
    }),
    'worker/index.js': `export default {
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/api/')) return Response.json({ name: 'Cloudflare' });
    return new Response(null, { status: 404 });
  },
};
`,
    'dist/index.html': '<!doctype html><div id="root">react shell</div>',
    'dist/about.html': 'about page',
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  const host = `${appId}.apps.localhost`;
  const nav = { 'sec-fetch-mode': 'navigate' };
  assert.is(
    (await h.call('GET', '/dashboard', { host, headers: nav })).text,
    '<!doctype html><div id="root">react shell</div>',
  );
  assert.is(
    (await h.call('GET', '/dashboard', { host })).status,
    404,
    'a fetch (not a navigation) reaches the Worker',
  );
  assert.equal(
    (await h.call('GET', '/api/x', { host })).body,
    { name: 'Cloudflare' },
    "the app's fetch() reaches the Worker",
  );
  assert.match(
    (await h.call('GET', '/api/x', { host, headers: nav })).text,
    'react shell',
    'a navigation never does (no run_worker_first), as on Workers',
  );
  assert.is(
    (await visit(appId, '/about')).text,
    'about page',
    'html_handling: /about serves about.html',
  );
});

test('a deno.json package entry maps its subpaths; a guarded dynamic remote import is left to fail when it runs', async () => {
  const dir = await project('deno-subpaths', {
    'deno.json': JSON.stringify({
      tasks: { start: 'deno run main.ts' },
      imports: { hono: 'npm:hono@^4' },
    }),
    'main.ts': `import { Hono } from 'hono';
import { html } from 'hono/html';
let extra = 'no network import';
try {
  const mod = await import('https://esm.sh/left-pad@1.3.0');
  extra = typeof mod.default;
} catch {}
const app = new Hono();
app.get('/', (c) => c.html(html\`<p>\${extra}</p>\`));
Deno.serve(app.fetch);
`,
  });
  await linkPackages(dir, ['hono']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, '<p>no network import</p>');
});

test('cloudflare:workers: env, waitUntil and a default-exported WorkerEntrypoint class; what is not here is named', async () => {
  const dir = await project('cf-workers', {
    'wrangler.jsonc': JSON.stringify({ name: 'cf-workers', main: 'src/index.ts' }),
    'src/index.ts': `import { env, waitUntil, WorkerEntrypoint } from 'cloudflare:workers';
let waited = 'not yet';
export default class extends WorkerEntrypoint {
  async fetch(request: Request) {
    const p = new URL(request.url).pathname;
    if (p === '/wait') {
      waitUntil(new Promise((r) => setTimeout(r, 20)).then(() => { waited = 'waited'; }));
      return new Response('queued');
    }
    if (p === '/waited') return new Response(waited);
    return Response.json({
      fromModule: env.GREETING ?? null,
      fromThis: (this.env as Record<string, string>).GREETING ?? null,
      hasCtx: typeof this.ctx.waitUntil,
    });
  }
}
`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
    key: u.api_key,
    params: { app_id: appId, name: 'GREETING' },
    body: { value: 'hello' },
  });
  assert.equal((await visit(appId, '/')).body, {
    fromModule: 'hello',
    fromThis: 'hello',
    hasCtx: 'function',
  });
  assert.is((await visit(appId, '/wait')).text, 'queued');
  assert.is((await visit(appId, '/waited')).text, 'waited', 'the call waited for waitUntil');

  for (const [name, source, message] of [
    [
      'cf-workflow',
      "import { WorkflowEntrypoint } from 'cloudflare:workers';\nexport class Flow extends WorkflowEntrypoint {}\nexport default { fetch: () => new Response('x') };\n",
      'WorkflowEntrypoint from "cloudflare:workers" is not available here',
    ],
    [
      'cf-sockets',
      "import { connect } from 'cloudflare:sockets';\nexport default { fetch: () => new Response(String(connect)) };\n",
      '"cloudflare:sockets" is not available here: there are no TCP sockets here',
    ],
  ] as const) {
    const bad = await project(name, {
      'wrangler.jsonc': JSON.stringify({ name, main: 'src/index.js' }),
      'src/index.js': source,
    });
    const out = await cli(['publish'], { cwd: bad });
    assert.is(out.code, 1, out.stdout + out.stderr);
    assert.match(out.stderr, message, name);
  }
  // A Durable Object class with no binding (OpenNext exports three for its optional caches) is a
  // class never made: it publishes. A config that binds one is refused, naming it.
  const unbound = await project('cf-do-unbound', {
    'wrangler.jsonc': JSON.stringify({ name: 'cf-do-unbound', main: 'src/index.js' }),
    'src/index.js':
      "import { DurableObject } from 'cloudflare:workers';\nexport class Cache extends DurableObject {}\nexport default { fetch: () => new Response(typeof Cache) };\n",
  });
  const ok = await cli(['publish'], { cwd: unbound });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.is((await visit(await appOf(unbound), '/')).text, 'function');
  const bound = await project('cf-do-bound', {
    'wrangler.jsonc': JSON.stringify({
      name: 'cf-do-bound',
      main: 'src/index.js',
      durable_objects: { bindings: [{ name: 'COUNTER', class_name: 'Counter' }] },
    }),
    'src/index.js':
      "import { DurableObject } from 'cloudflare:workers';\nexport class Counter extends DurableObject {}\nexport default { fetch: (r, env) => env.COUNTER.get(env.COUNTER.idFromName('a')).fetch(r) };\n",
  });
  const refused = await cli(['publish'], { cwd: bound });
  assert.is(refused.code, 1, refused.stdout + refused.stderr);
  assert.match(
    refused.stderr,
    'wrangler.jsonc binds the Durable Object COUNTER (class Counter): Durable Objects are not available here yet',
  );
});

test('what stops a publish says what is wrong and where, in one line, and publishes nothing', async () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'missing-main',
      {
        'wrangler.jsonc': JSON.stringify({ name: 'x', main: '.svelte-kit/cloudflare/_worker.js' }),
      },
      /wrangler\.jsonc: main "\.svelte-kit\/cloudflare\/_worker\.js" does not exist: build the project first/,
    ],
    [
      'two-configs',
      {
        'wrangler.toml': 'name = "x"\nmain = "src/index.js"\n',
        'wrangler.jsonc': '{"name": "x", "main": "src/index.js"}',
        'src/index.js': WORKER,
      },
      /wrangler\.jsonc and wrangler\.toml are both here: wrangler reads only one/,
    ],
    [
      'bad-jsonc',
      { 'wrangler.jsonc': '{\n  "name": "x",\n  "main" "src/index.js"\n}', 'src/index.js': WORKER },
      /wrangler\.jsonc:3:10: not valid JSON: ColonExpected/,
    ],
    [
      'bad-toml',
      { 'wrangler.toml': 'name = "x"\nmain = \n', 'src/index.js': WORKER },
      /wrangler\.toml:2:\d+: not valid TOML/,
    ],
  ];
  for (const [name, files, message] of cases) {
    const dir = await project(name, files);
    const r = await cli(['publish'], { cwd: dir });
    assert.is(r.code, 1, `${name}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, name);
  }
  // a symbolic link out of the project
  const linked = await project('symlink-out', { 'public/index.html': 'hi' });
  await symlink('/etc', path.join(linked, 'public', 'etc'));
  const out = await cli(['publish'], { cwd: linked });
  assert.is(out.code, 1, out.stdout + out.stderr);
  assert.match(out.stderr, 'public/etc is a symbolic link to /etc, outside the project');
  // a build over the release limits: the numbers and the largest offenders
  const many: Record<string, string> = {};
  for (let i = 0; i < 1001; i++) many[`public/chunks/c${i}.js`] = 'x';
  const crowded = await project('too-many', many);
  const full = await cli(['publish'], { cwd: crowded });
  assert.is(full.code, 1, full.stdout + full.stderr);
  assert.match(
    full.stderr,
    '1001 files; a release has at most 1000. Most files are in public/chunks/ (1001)',
  );
  const apps = await h.api('GET /v0/apps', { key: u.api_key });
  assert.not.ok(
    apps.apps.some((a: { name: string }) => ['x', 'symlink-out', 'too-many'].includes(a.name)),
    'nothing was published',
  );
});

test.after(async () => {
  await live.close();
  await h.close();
  await rm(work, { recursive: true, force: true });
});
test.run();
