/**
 * Code written for another host runs as it is written there: the entry shapes of Workers (module
 * `fetch(request, env, ctx)`, `scheduled`, service-worker `addEventListener`), Deno (`Deno.serve`,
 * `Deno.env`), Val Town and Netlify (a default-exported function), Vercel (functions named for
 * HTTP methods), Node-style `process.env`; and a
 * publish whose manifest declares what the module has nothing to call for never goes live.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { startWorker } from '../_lib/mail.ts';

const h = await createHarness();
const worker = await startWorker(h);
const u = await newUser(h);
const key = u.api_key;
const get = (host: string, path = '/x') => h.call('GET', path, { host });

test('a default-exported function answers requests (Val Town HTTP vals, Netlify functions)', async () => {
  const a = await publishServerApp(
    h,
    key,
    `export default async function (req, ctx) { return new Response('fn ' + new URL(req.url).pathname + ' ' + ctx.app.app_id); }`,
  );
  const r = await get(a.host, '/hello');
  assert.is(r.status, 200, r.text);
  assert.is(r.text, `fn /hello ${a.appId}`);
});

test("addEventListener('fetch') with respondWith answers requests (service-worker syntax)", async () => {
  const a = await publishServerApp(
    h,
    key,
    `addEventListener('fetch', (event) => event.respondWith(handle(event.request)));
     async function handle(request) { return new Response('sw ' + request.method + ' ' + new URL(request.url).pathname); }`,
  );
  const r = await get(a.host, '/sw');
  assert.is(r.text, 'sw GET /sw');
});

test('Deno.serve(handler) and Deno.serve(options, handler) answer requests', async () => {
  const one = await publishServerApp(
    h,
    key,
    `Deno.serve((req) => new Response('deno ' + new URL(req.url).pathname));`,
  );
  assert.is((await get(one.host, '/d')).text, 'deno /d');
  const two = await publishServerApp(
    h,
    key,
    `Deno.serve({ port: 8000 }, async (req) => Response.json({ path: new URL(req.url).pathname }));`,
  );
  assert.equal((await get(two.host, '/o')).body, { path: '/o' });
});

test('functions named for HTTP methods answer their method (Vercel functions, Next.js route handlers)', async () => {
  const a = await publishServerApp(
    h,
    key,
    `export function GET(request) { return Response.json({ got: new URL(request.url).pathname }); }
     export async function POST(request) { return new Response('posted ' + (await request.text()), { status: 201 }); }
     export const config = { runtime: 'edge' };`,
  );
  assert.equal((await get(a.host, '/api/hello')).body, { got: '/api/hello' });
  const head = await h.call('HEAD', '/api/hello', { host: a.host });
  assert.is(head.status, 200);
  assert.is(head.text, '');
  const posted = await h.call('POST', '/api/hello', { host: a.host, rawBody: 'abc' });
  assert.is(posted.status, 201);
  assert.is(posted.text, 'posted abc');
  const del = await h.call('DELETE', '/api/hello', { host: a.host });
  assert.is(del.status, 405);
  assert.is(del.headers.get('allow'), 'GET, HEAD, POST');
});

test('configuration where each host reads it: env.NAME, process.env, Deno.env, ctx.secrets; a write stays local', async () => {
  const source = `export default {
    async fetch(request, env, ctx) {
      const before = { process: process.env.API_TOKEN, deno: Deno.env.get('API_TOKEN') };
      // as Next.js does at load, and Node, Deno and Workers allow: the write stays in this instance
      process.env.API_TOKEN = 'written';
      process.env.NEXT_RUNTIME = 'edge';
      Deno.env.set('FROM_DENO', 1);
      delete process.env.NODE_ENV;
      const after = {
        process: process.env.API_TOKEN,
        deno: Deno.env.get('API_TOKEN'),
        next: process.env.NEXT_RUNTIME,
        fromDeno: process.env.FROM_DENO,
        nodeEnv: process.env.NODE_ENV ?? null,
        has: 'NEXT_RUNTIME' in process.env,
      };
      delete process.env.API_TOKEN;
      return Response.json({
        ...before,
        after,
        deleted: process.env.API_TOKEN ?? null,
        env: env.API_TOKEN,
        ctx: env.secrets.get('API_TOKEN'),
        missing: env.NOT_SET ?? null,
        node_env: process.env.NODE_ENV ?? null,
        members: typeof env.data.collection,
        exec: [typeof ctx.waitUntil, typeof ctx.passThroughOnException],
      });
    },
  };`;
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: { secrets: { required: ['API_TOKEN'] } },
    files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
  });
  const appId = (await h.call('PUT', '/v0/apps', { key, body })).body.app_id;
  await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, { key, body: { value: 'tok-123' } });
  assert.is((await h.call('PUT', `/v0/apps/${appId}`, { key, body })).body.status, 'published');
  const r = await get(`${appId}.apps.localhost`);
  assert.equal(r.body, {
    process: 'tok-123',
    deno: 'tok-123',
    after: {
      process: 'written',
      deno: 'written',
      next: 'edge',
      fromDeno: '1',
      nodeEnv: null,
      has: true,
    },
    deleted: null,
    env: 'tok-123',
    ctx: 'tok-123',
    missing: null,
    node_env: null,
    members: 'function',
    exec: ['function', 'function'],
  });
});

test('ctx.waitUntil work is finished when the answer is sent', async () => {
  const a = await publishServerApp(
    h,
    key,
    `let done = 0;
     export default {
       fetch(request, env, ctx) {
         if (new URL(request.url).pathname === '/count') return new Response(String(done));
         ctx.waitUntil(new Promise((r) => setTimeout(r, 20)).then(() => { done++; }));
         return new Response('accepted');
       },
     };`,
  );
  assert.is((await get(a.host, '/work')).text, 'accepted');
  assert.is((await get(a.host, '/count')).text, '1');
});

test("Workers' scheduled(controller, env, ctx) and a default function run a declared job", async () => {
  const jobs = { tick: { trigger: 'schedule', schedule: 'hourly' } };
  const workers = await publishServerApp(
    h,
    key,
    `export default {
       fetch() { return new Response('ok'); },
       async scheduled(controller, env, ctx) {
         env.log.info('scheduled ran', { type: controller.type, time: typeof controller.scheduledTime, wait: typeof ctx.waitUntil });
       },
     };`,
    { resources: { jobs } },
  );
  const val = await publishServerApp(
    h,
    key,
    `export default async function main(event, ctx) { ctx.log.info('val ran', { job: event.job_name }); return new Response('hi'); }`,
    { resources: { jobs } },
  );
  for (const a of [workers, val])
    await h.api('POST /v0/apps/{app_id}/jobs/{job_name}/runs', {
      key,
      params: { app_id: a.appId, job_name: 'tick' },
      body: {},
    });
  const ran = await waitFor(
    async () => (await eventsOf(h, key, workers.appId, 'runtime.log.info'))[0],
  );
  assert.match(JSON.stringify(ran), '"type":"scheduled"');
  assert.match(JSON.stringify(ran), '"time":"number"');
  const valRan = await waitFor(
    async () => (await eventsOf(h, key, val.appId, 'runtime.log.info'))[0],
  );
  assert.match(JSON.stringify(valRan), '"job":"tick"');
});

test('the publish-time load reports the handlers each entry shape offers', async () => {
  const check = h.server.runtime.checkModule;
  const shapes: [string, string[]][] = [
    ['export default { fetch() {}, job() {}, webhook() {} };', ['fetch', 'job', 'webhook']],
    ['export default async function (req) { return new Response("x"); }', ['fetch', 'job']],
    ['export default { fetch() {}, scheduled() {} };', ['fetch', 'job']],
    ["addEventListener('fetch', (e) => e.respondWith(new Response('x')));", ['fetch']],
    ["Deno.serve(() => new Response('x'));", ['fetch']],
    ['export default { async job() {} };', ['job']],
    ['export function GET() {} export function POST() {}', ['fetch']],
    // top-level await (OpenNext's bundle awaits its middleware's setup at load)
    ['await Promise.resolve(); export default { fetch() {}, job() {} };', ['fetch', 'job']],
    ['const a = await new Promise((r) => queueMicrotask(r)); export function GET() {}', ['fetch']],
  ];
  for (const [source, handlers] of shapes) {
    const r = await check({
      appId: 'shapes000000',
      planKey: 'free',
      entry: 'server.js',
      sources: { 'server.js': source },
    });
    assert.equal(r.ok ? r.handlers : r, handlers, source);
  }
});

test('a module with top-level await answers with what it awaited', async () => {
  const a = await publishServerApp(
    h,
    key,
    `const greeting = await Promise.resolve('awaited at load');
     export default { fetch: () => new Response(greeting) };`,
  );
  const r = await get(a.host);
  assert.is(r.status, 200, r.text);
  assert.is(r.text, 'awaited at load');
});

test("process's listener methods work and can be wrapped, as Next.js does at load", async () => {
  const a = await publishServerApp(
    h,
    key,
    `const seen = [];
     const before = process.listeners('unhandledRejection');
     process.removeAllListeners('unhandledRejection');
     const original = process.addListener;
     process.addListener = function (event, fn) { seen.push('wrapped ' + event); return original.call(process, event, fn); };
     process.addListener('unhandledRejection', (r) => seen.push('got ' + r));
     process.once('custom', (x) => seen.push('once ' + x));
     process.emit('custom', 1);
     process.emit('custom', 2);
     process.emit('unhandledRejection', 'why');
     export default { fetch: () => Response.json({ before: before.length, seen, count: process.listenerCount('unhandledRejection') }) };`,
  );
  const r = await get(a.host);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, {
    before: 0,
    seen: ['wrapped unhandledRejection', 'once 1', 'got why'],
    count: 1,
  });
});

test('new Response(body, "text") throws a TypeError, as workerd and Node do: the call fails instead of answering 200 empty', async () => {
  const a = await publishServerApp(
    h,
    key,
    `export default { fetch(request) {
       const p = new URL(request.url).pathname;
       if (p === '/probe') {
         const out = {};
         for (const [name, make] of [['response', () => new Response('x', 'text')], ['request', () => new Request('https://a.test/', 'GET')], ['number', () => new Response('x', 3)]]) {
           try { make(); out[name] = 'made'; } catch (e) { out[name] = e.name; }
         }
         out.nullInit = new Response('ok', null).status;
         return Response.json(out);
       }
       return new Response('hello', 'text/plain');
     } };`,
  );
  assert.equal((await get(a.host, '/probe')).body, {
    response: 'TypeError',
    request: 'TypeError',
    number: 'TypeError',
    nullInit: 200,
  });
  assert.is((await get(a.host, '/buggy')).status, 500);
});

test("request.cf: undefined what no edge knows; the country a trusted proxy's header gives (PLATFORM_COUNTRY_HEADER)", async () => {
  const source = `export default { fetch(request) { return Response.json({ country: request.cf.country ?? null, asn: request.cf.asn ?? null, made: new Request('https://a.test/').cf ?? null }); } };`;
  const plain = await publishServerApp(h, key, source);
  assert.equal(
    (await h.call('GET', '/cf', { host: plain.host, headers: { 'cf-ipcountry': 'de' } })).body,
    {
      country: null,
      asn: null,
      made: null,
    },
  );
  const proxied = await createHarness({ PLATFORM_COUNTRY_HEADER: 'CF-IPCountry' });
  try {
    const k = (await newUser(proxied)).api_key;
    const a = await publishServerApp(proxied, k, source);
    assert.is(
      (await proxied.call('GET', '/cf', { host: a.host, headers: { 'cf-ipcountry': 'de' } })).body
        .country,
      'DE',
    );
    assert.is((await proxied.call('GET', '/cf', { host: a.host })).body.country, null);
  } finally {
    await proxied.close();
  }
});

test('require_handlers=true: a module without a handler its manifest declares is stored, not live, a reason each', async () => {
  const body = (source: string, runtime: Record<string, string>, resources?: unknown) =>
    site({
      runtime: { static_root: 'public', server_entry: 'server.js', ...runtime },
      files: [file('public/index.html', 'static'), file('server.js', source, 'text/javascript')],
      ...(resources ? { resources } : {}),
    });
  const lacking = body(
    'export default { async job() {} };',
    { fallback: 'server' },
    {
      jobs: { tick: { trigger: 'schedule', schedule: 'hourly' } },
      webhooks: { github: { provider: 'none' }, queued: { deliver_to: 'job:tick' } },
    },
  );
  const refused = await h.api('PUT /v0/apps', {
    key,
    query: { require_handlers: 'true' },
    body: lacking,
  });
  assert.is(refused.status, 'stored');
  assert.is(refused.activation.status, 'failed');
  assert.equal(refused.activation.reasons, [
    'no fetch handler, and runtime.fallback is "server": the server module must export default { fetch }',
    'no webhook handler for webhook github, delivered to the server: the server module must export default { webhook }',
  ]);
  const app = await h.api('GET /v0/apps/{app_id}', { key, params: { app_id: refused.app_id } });
  assert.is(app.live_release_id, null, 'nothing went live');
  const failed = await eventsOf(h, key, refused.app_id, 'runtime.deploy_failed');
  assert.match(failed[0]?.message ?? '', 'no handler for what the manifest declares');

  // every entry shape counts: a default function is fetch and job; scheduled is job
  for (const source of [
    'export default async function (req) { return new Response("x"); }',
    'export default { fetch() { return new Response("x"); }, scheduled() {} };',
  ]) {
    const ok = await h.api('PUT /v0/apps', {
      key,
      query: { require_handlers: 'true' },
      body: body(
        source,
        { fallback: 'server' },
        { jobs: { tick: { trigger: 'schedule', schedule: 'hourly' } } },
      ),
    });
    assert.is(ok.activation.status, 'live', source);
  }
  // a declared job with no server module at all
  const noModule = await h.api('PUT /v0/apps', {
    key,
    query: { require_handlers: 'true' },
    body: site({ resources: { jobs: { tick: { trigger: 'schedule', schedule: 'hourly' } } } }),
  });
  assert.equal(noModule.activation.reasons, [
    'no job handler for the declared job tick: the server module must export default { job }',
  ]);

  // without it, handlers stay optional as the contract has them: live, and the job is blocked when run
  const contract = await h.api('PUT /v0/apps/{app_id}', {
    key,
    params: { app_id: refused.app_id },
    body: lacking,
  });
  assert.is(contract.activation.status, 'live');
  assert.is((await get(`${contract.app_id}.apps.localhost`)).status, 500, 'no fetch handler');
});

test.after(async () => {
  await worker.stop();
  await h.close();
});

test.run();
