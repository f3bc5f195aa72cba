/**
 * `platform publish` in a project written for another host, as it is: a Workers project with a
 * wrangler.toml and no manifest, a folder with server code and no static files, an SPA whose
 * Worker answers deep links from its assets. The CLI writes the manifest the project implies,
 * says what it could not map, and the app answers as it does on its own host.
 */
import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, linkPackages, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-bring-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

const project = (name: string, files: Record<string, string>) => writeProject(work, name, files);
const appOf = linkedApp;
const visit = (appId: string, p: string) => h.call('GET', p, { host: `${appId}.apps.localhost` });

test('a Workers project (wrangler.toml, Hono, c.env, scheduled, cron, vars, KV) publishes as it is', async () => {
  const dir = await project('worker', {
    'wrangler.toml': `name = "hello-worker"
main = "src/index.ts"
compatibility_date = "2024-09-23"

[triggers]
crons = ["*/5 * * * *"]

[vars]
GREETING = "hello"

[[kv_namespaces]]
binding = "CACHE"
id = "0123"
`,
    'package.json': JSON.stringify({ name: 'hello-worker', private: true }),
    'src/index.ts': `import { Hono } from 'hono';
type Bindings = { GREETING?: string };
const app = new Hono<{ Bindings: Bindings }>();
app.get('/', (c) => c.text('root from the worker'));
app.get('/hello/:name', (c) => c.json({ hi: c.req.param('name'), greeting: c.env.GREETING ?? null, asn: (c.req.raw as any).cf?.asn ?? null, cf: typeof (c.req.raw as any).cf }));
export default {
  fetch: app.fetch,
  async scheduled(controller: { cron: string }, env: unknown, ctx: { waitUntil(p: Promise<unknown>): void }) {
    ctx.waitUntil(Promise.resolve());
  },
};
`,
  });
  await linkPackages(dir, ['hono']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'No manifest.platform.json: wrote one from wrangler.toml');
  assert.match(r.stderr, 'runs more often than every 15 minutes');
  assert.match(r.stderr, 'vars GREETING');
  assert.match(r.stderr, 'KV namespace CACHE: kept by the platform');
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.platform.json'), 'utf8'));
  assert.equal(manifest, {
    app: { name: 'hello-worker' },
    runtime: { static_root: '.platform/build', server_entry: 'src/index.ts', fallback: 'server' },
    resources: { jobs: { scheduled: { trigger: 'schedule', schedule: 'every_15_minutes' } } },
  });
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, 'root from the worker');
  assert.equal((await visit(appId, '/hello/ada')).body, {
    hi: 'ada',
    greeting: null,
    asn: null,
    cf: 'object',
  });
  // the server's source is not a static file of the release
  assert.is((await visit(appId, '/src/index.ts')).status, 404);
  // a second publish uses the manifest now in the folder, and says nothing more
  const again = await cli(['publish'], { cwd: dir });
  assert.is(again.code, 0, again.stderr);
  assert.not.match(again.stderr, 'wrote one');
});

test('a folder with server code and no static files publishes as it is, and the CLI says so', async () => {
  const dir = await project('plain', {
    'src/index.js': `export default { fetch(req) { return new Response('plain ' + new URL(req.url).pathname); } };`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, 'plain /');
  assert.is((await visit(appId, '/src/index.js')).text, 'plain /src/index.js', 'no source served');

  // a manifest naming a static folder that is not there: the server answers everything, and is told
  const named = await project('named', {
    'manifest.platform.json': JSON.stringify({
      app: { name: 'named' },
      runtime: { static_root: 'public', server_entry: 'server.js', fallback: 'server' },
    }),
    'server.js': `export default { fetch() { return new Response('named'); } };`,
  });
  const n = await cli(['publish'], { cwd: named });
  assert.is(n.code, 0, n.stdout + n.stderr);
  assert.match(n.stderr, 'static_root "public" holds no files');
  assert.is((await visit(await appOf(named), '/')).text, 'named');
});

test('a Worker named on the wrangler command line (Hono serve-static example): assets and the Worker', async () => {
  // honojs/examples serve-static: wrangler.toml names assets and no main; `npm run deploy` runs
  // `wrangler deploy src/index.ts`, so Cloudflare serves the files and the Worker answers the rest
  const dir = await project('serve-static', {
    'wrangler.toml': `name = "hono-example-basic"
compatibility_date = "2024-09-19"

assets = { directory = "./assets/" }`,
    'package.json': JSON.stringify({
      name: 'serve-static',
      type: 'module',
      scripts: { dev: 'wrangler dev src/index.ts', deploy: 'wrangler deploy src/index.ts' },
      dependencies: { hono: '^4.2.4' },
    }),
    'assets/my-file.txt': 'This is my-file.txt',
    'assets/folder/nested-file.txt': 'This is nested-file.txt',
    'src/index.ts': `import { Hono } from "hono";
import { poweredBy } from "hono/powered-by";
const app = new Hono();
app.use("*", poweredBy());
app.get("/", (c) => c.html("<h1>Welcome to Hono</h1>"));
export default app;
`,
  });
  await linkPackages(dir, ['hono']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(
    r.stderr,
    'server entry src/index.ts: the Worker package.json\'s "deploy" script hands wrangler',
  );
  const appId = await appOf(dir);
  const home = await visit(appId, '/');
  assert.is(home.status, 200);
  assert.is(home.text, '<h1>Welcome to Hono</h1>');
  assert.is(home.headers.get('x-powered-by'), 'Hono');
  assert.is((await visit(appId, '/my-file.txt')).text, 'This is my-file.txt');
  assert.is((await visit(appId, '/folder/nested-file.txt')).text, 'This is nested-file.txt');
});

test("create-hono's Node template (serve({ fetch: app.fetch, port }) from @hono/node-server) publishes as it is", async () => {
  // honojs/starter templates/nodejs, as `npm create hono` writes it
  const dir = await project('hono-node', {
    'package.json': JSON.stringify({
      type: 'module',
      scripts: { dev: 'tsx watch src/index.ts', build: 'tsc', start: 'node dist/index.js' },
      dependencies: { '@hono/node-server': '^2.1.1', hono: '^4.13.3' },
    }),
    'src/index.ts': `import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const app = new Hono()

app.get('/', (c) => {
  return c.text('Hello Hono!')
})

serve({
  fetch: app.fetch,
  port: 3000
}, (info) => {
  console.log(\`Server is running on http://localhost:\${info.port}\`)
})
`,
  });
  await linkPackages(dir, ['hono', '@hono/node-server']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await appOf(dir);
  const home = await visit(appId, '/');
  assert.is(home.status, 200);
  assert.is(home.text, 'Hello Hono!');
  assert.is((await visit(appId, '/nope')).status, 404);
  // its other ways to make a Node server name what to use instead
  const adaptor = await project('hono-node-adaptor', {
    'src/index.ts': `import { createAdaptorServer } from '@hono/node-server'
import { Hono } from 'hono'
createAdaptorServer({ fetch: new Hono().fetch }).listen(3000)
`,
  });
  await linkPackages(adaptor, ['hono', '@hono/node-server']);
  const bad = await cli(['publish'], { cwd: adaptor });
  assert.is(bad.code, 5, bad.stdout + bad.stderr);
  assert.match(bad.stdout + bad.stderr, 'use serve({ fetch }) or export default app');
});

test('an SPA with a Worker: static files served, deep links answered with index.html through env.ASSETS', async () => {
  const dir = await project('spa', {
    'wrangler.jsonc': `{
      // Cloudflare's React template shape
      "name": "spa-worker",
      "main": "worker/index.js",
      "assets": {
        "directory": "./dist",
        "not_found_handling": "single-page-application",
        "run_worker_first": ["/api/*"],
      },
    }`,
    'dist/index.html': '<!doctype html><div id="root">spa shell</div>',
    'dist/assets/app.js': 'console.log("app")',
    'worker/index.js': `export default {
      async fetch(request, env) {
        const url = new URL(request.url);
        if (url.pathname.startsWith('/api/')) return Response.json({ name: 'Cloudflare' });
        const asset = await env.ASSETS.fetch(request);
        if (asset.status !== 404) return asset;
        return env.ASSETS.fetch(new Request(new URL('/index.html', request.url)));
      },
    };`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'assets.run_worker_first: static files are served before the Worker here');
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, '<!doctype html><div id="root">spa shell</div>');
  assert.is((await visit(appId, '/assets/app.js')).text, 'console.log("app")');
  assert.equal((await visit(appId, '/api/name')).body, { name: 'Cloudflare' });
  // a browser's navigation gets the SPA's index.html before the Worker, as on Workers
  const nav = await h.call('GET', '/users/7', {
    host: `${appId}.apps.localhost`,
    headers: { 'sec-fetch-mode': 'navigate' },
  });
  assert.is(nav.text, '<!doctype html><div id="root">spa shell</div>');
  const apiNav = await h.call('GET', '/api/name', {
    host: `${appId}.apps.localhost`,
    headers: { 'sec-fetch-mode': 'navigate' },
  });
  assert.equal(
    apiNav.body,
    { name: 'Cloudflare' },
    'run_worker_first paths still go to the Worker',
  );
  const deep = await visit(appId, '/users/42/settings');
  assert.is(deep.status, 200);
  assert.is(deep.text, '<!doctype html><div id="root">spa shell</div>');
  assert.match(deep.headers.get('content-type') ?? '', 'text/html');
});

test('a Deno Deploy project (deno.json import map, npm: specifiers, JSX for hono/jsx, Deno.serve) publishes as it is', async () => {
  const dir = await project('deno', {
    'deno.json': JSON.stringify({
      tasks: { start: 'deno run --allow-net main.tsx' },
      imports: { hono: 'npm:hono@^4', 'hono/': 'npm:/hono@^4/', '$lib/': './lib/' },
      compilerOptions: { jsx: 'precompile', jsxImportSource: 'hono/jsx' },
    }),
    'main.tsx': `import { Hono } from 'hono';
import { html } from 'npm:hono@4/html';
import { shout } from '$lib/shout.ts';
const app = new Hono();
const Page = (props: { name: string }) => <h1>Hello {props.name}</h1>;
app.get('/', (c) => c.html(<Page name={shout('deno')} />));
app.get('/raw', (c) => c.html(html\`<p>\${Deno.env.get('MISSING') ?? 'no env'}</p>\`));
Deno.serve(app.fetch);
`,
    'lib/shout.ts': "export const shout = (s: string) => s.toUpperCase() + '!';\n",
  });
  await linkPackages(dir, ['hono']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'wrote one from deno.json');
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, '<h1>Hello DENO!</h1>');
  assert.is((await visit(appId, '/raw')).text, '<p>no env</p>');

  // a remote import cannot be fetched at run time: the publish stops and says what to do
  const remote = await project('deno-remote', {
    'deno.json': JSON.stringify({ tasks: { start: 'deno run main.ts' } }),
    'main.ts':
      "import { serve } from 'https://deno.land/std@0.200.0/http/server.ts';\nserve(() => new Response('x'));\n",
  });
  const bad = await cli(['publish'], { cwd: remote });
  assert.is(bad.code, 1, bad.stdout + bad.stderr);
  assert.match(bad.stderr, 'is a remote import, which cannot be fetched at run time here');
  // and a jsr: package that is not installed is named, with the command that installs it
  const jsr = await project('deno-jsr', {
    'deno.json': JSON.stringify({ tasks: { start: 'deno run main.ts' } }),
    'main.ts':
      "import { assert } from 'jsr:@std/assert@1';\nDeno.serve(() => new Response(String(typeof assert)));\n",
  });
  const missing = await cli(['publish'], { cwd: jsr });
  assert.is(missing.code, 1);
  assert.match(
    missing.stderr,
    '"jsr:@std/assert@1" is not installed in node_modules (looked for @jsr/std__assert)',
  );
});

test('a Netlify site with one function (netlify.toml, a default-exported function, process.env) publishes as it is', async () => {
  const dir = await project('netlify', {
    'netlify.toml': `[build]
publish = "public"
functions = "netlify/functions"
`,
    'public/index.html': '<h1>netlify static</h1>',
    'netlify/functions/hello.mjs': `export default async (req, context) => {
  const name = new URL(req.url).searchParams.get('name') ?? 'world';
  return new Response('Hello, ' + name + ' (' + (process.env.GREETING_SUFFIX ?? 'no suffix') + ')');
};
export const config = { path: '/hello' };
`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'wrote one from netlify.toml');
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.platform.json'), 'utf8'));
  assert.equal(manifest.runtime, {
    static_root: 'public',
    server_entry: 'netlify/functions/hello.mjs',
    fallback: 'server',
  });
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, '<h1>netlify static</h1>');
  assert.is((await visit(appId, '/hello?name=ada')).text, 'Hello, ada (no suffix)');
});

test("create-hono's Netlify template (an Edge Function on jsr:@hono/hono) publishes as it is", async () => {
  // honojs/starter templates/netlify, as `npm create hono` writes it
  const dir = await project('hono-netlify', {
    'netlify.toml': `[[edge_functions]]
  function = "index"
  path = "/*"`,
    'netlify/edge-functions/index.ts': `import { Hono } from 'jsr:@hono/hono'
import { handle } from 'jsr:@hono/hono/netlify'

const app = new Hono()

app.get('/', (c) => {
  return c.text('Hello Hono!')
})

export default handle(app)
`,
  });
  // `npx jsr add @hono/hono` installs it as @jsr/hono__hono; the JSR registry is not reachable
  // from here, so the npm build of the same package stands in
  await mkdir(path.join(dir, 'node_modules', '@jsr'), { recursive: true });
  await symlink(path.resolve('node_modules/hono'), path.join(dir, 'node_modules/@jsr/hono__hono'));
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'edge function netlify/edge-functions/index.ts');
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, 'Hello Hono!');
  assert.is((await visit(appId, '/nope')).status, 404);
});

test('a Vercel project (a function in api/ with the Web signature, public/) publishes as it is', async () => {
  // Vercel's Functions guide: api/hello.ts exporting a handler per HTTP method
  const dir = await project('vercel', {
    'package.json': JSON.stringify({ name: 'vercel-fns', type: 'module' }),
    'public/index.html': '<h1>vercel static</h1>',
    'api/hello.ts': `export function GET(request: Request) {
  return new Response(\`Hello from \${process.env.VERCEL_REGION ?? 'nowhere'}\`);
}

export async function POST(request: Request) {
  const { name } = (await request.json()) as { name: string };
  return Response.json({ hello: name });
}
`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'api/hello.ts: the server entry answers every path no static file does');
  const appId = await appOf(dir);
  assert.is((await visit(appId, '/')).text, '<h1>vercel static</h1>');
  assert.is((await visit(appId, '/api/hello')).text, 'Hello from nowhere');
  const posted = await h.call('POST', '/api/hello', {
    host: `${appId}.apps.localhost`,
    body: { name: 'platform' },
  });
  assert.equal(posted.body, { hello: 'platform' });
  assert.is((await h.call('PUT', '/api/hello', { host: `${appId}.apps.localhost` })).status, 405);
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();
