/**
 * `platform init --template <name>`: every template publishes as it is (through the real CLI) and
 * does what its README says.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { run, type Runner } from 'graphile-worker';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { eventsOf, waitFor } from '../_lib/apps.ts';
import { cliFor, linkPackages } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

// app code may fetch loopback here, as an operator may allow addresses (the cron template fetches a page)
const h = await createHarness({ PLATFORM_FETCH_ALLOW: '127.0.0.1' });
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-templates-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
let runner: Runner;

const page = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<html><head><title> The watched page </title></head><body>hello</body></html>');
});
await new Promise<void>((r) => page.listen(0, '127.0.0.1', () => r()));
const pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}/watched`;

const get = (appId: string, p: string, init?: RequestInit) =>
  h.server.request(`http://${appId}.apps.localhost${p}`, init);

async function fromTemplate(template: string, folder: string): Promise<string> {
  const dir = path.join(work, folder);
  const r = await cli(['init', dir, '--template', template]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'created manifest.platform.json');
  assert.match(r.stdout, 'Next:');
  return dir;
}

async function publishJson(dir: string, expectCode = 0) {
  const r = await cli(['publish', dir, '--json']);
  assert.is(r.code, expectCode, r.stdout + r.stderr);
  return JSON.parse(r.stdout) as {
    app_id: string;
    release_id: string;
    status: string;
    activation: { missing_secrets: string[] };
  };
}

test.before(async () => {
  await mkdir(work, { recursive: true });
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    concurrency: 2,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
});

test('static: a site with a 404 page', async () => {
  const dir = await fromTemplate('static', 'my-site');
  assert.match(await readFile(path.join(dir, '.gitignore'), 'utf8'), '.env');
  const p = await publishJson(dir);
  const home = await get(p.app_id, '/');
  assert.is(home.status, 200);
  assert.match(await home.text(), '<h1>my-site</h1>');
  const missing = await get(p.app_id, '/nope');
  assert.is(missing.status, 404);
  assert.match(await missing.text(), 'There is no page here');
  // a folder that already is an app is refused (two templates' files would mix); --force adds only what is missing
  const again = await cli(['init', dir, '--template', 'hono']);
  assert.is(again.code, 1);
  assert.match(again.stderr, 'is already an app (it has a manifest.platform.json)');
  assert.match(again.stderr, '--force');
  const forced = await cli(['init', dir, '--template', 'static', '--force']);
  assert.is(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, 'kept    manifest.platform.json');
  const bad = await cli(['init', path.join(work, 'x'), '--template', 'nope']);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, 'hono');
});

test('hono: the guestbook form and JSON API store messages in the collection', async () => {
  const dir = await fromTemplate('hono', 'guestbook');
  await linkPackages(dir, ['hono']); // what `npm install` does with its package.json
  assert.ok(JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')).dependencies.hono);
  const p = await publishJson(dir);
  assert.is(p.status, 'published');
  const form = await get(p.app_id, '/api/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: 'name=Ada&message=Hello+from+the+form',
  });
  assert.is(form.status, 303);
  assert.is(form.headers.get('location'), '/');
  const json = await get(p.app_id, '/api/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Grace', message: 'Hello from a script' }),
  });
  assert.is(json.status, 201);
  const bad = await get(p.app_id, '/api/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x' }),
  });
  assert.is(bad.status, 400);
  const list = (await (await get(p.app_id, '/api/messages')).json()) as {
    messages: { name: string; message: string }[];
  };
  assert.equal(
    list.messages.map((m) => [m.name, m.message]),
    [
      ['Grace', 'Hello from a script'],
      ['Ada', 'Hello from the form'],
    ],
  );
  assert.is((await get(p.app_id, '/')).status, 200);
  assert.is(
    ((await (await get(p.app_id, '/api/health')).json()) as { release: string }).release,
    p.release_id,
  );
});

test('cron: the scheduled job fetches TARGET_URL and stores what it got; jobs run runs it now', async () => {
  const dir = await fromTemplate('cron', 'pinger');
  assert.match(await readFile(path.join(dir, '.env'), 'utf8'), 'TARGET_URL=');
  const first = await publishJson(dir, 3);
  assert.equal(first.activation.missing_secrets, ['TARGET_URL']);
  const set = await cli(['secrets', 'set', 'TARGET_URL'], { cwd: dir, stdin: pageUrl });
  assert.is(set.code, 0, set.stderr);
  const p = await publishJson(dir);
  const ran = await cli(['jobs', 'run', 'snapshot'], { cwd: dir });
  assert.is(ran.code, 0, ran.stderr);
  await waitFor(async () => (await eventsOf(h, u.api_key, p.app_id, 'job.succeeded'))[0]);
  const { snapshots } = (await (await get(p.app_id, '/api/snapshots')).json()) as {
    snapshots: { url: string; status: number; title: string }[];
  };
  assert.is(snapshots.length, 1);
  assert.is(snapshots[0]!.url, pageUrl);
  assert.is(snapshots[0]!.status, 200);
  assert.is(snapshots[0]!.title, 'The watched page');
});

test('webhook: send-test.mjs sends a signed delivery; the job stores it once; a bad signature is refused', async () => {
  const dir = await fromTemplate('webhook', 'hooks');
  const env = await readFile(path.join(dir, '.env'), 'utf8');
  const secret = /^WEBHOOK_SECRET=(whsec_\S+)$/m.exec(env)?.[1];
  assert.ok(secret, 'init made a signing secret');
  await publishJson(dir, 3);
  assert.is((await cli(['secrets', 'set', 'WEBHOOK_SECRET'], { cwd: dir, stdin: secret })).code, 0);
  const p = await publishJson(dir);
  const origin = `http://${p.app_id}.apps.localhost:${live.port}`;
  const send = (body?: string, extraEnv: Record<string, string> = {}) =>
    promisify(execFile)(
      process.execPath,
      [
        '--import',
        path.resolve('test/_lib/localhost-resolver.mjs'),
        path.join(dir, 'send-test.mjs'),
        origin,
        ...(body ? [body] : []),
      ],
      { env: { ...process.env, ...extraEnv } },
    ).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
  const sent = await send('{"type":"order.paid","order":42}');
  assert.is(sent.code, 0, sent.out);
  assert.match(sent.out, /^202 .*"queued":true/);
  await waitFor(async () => (await eventsOf(h, u.api_key, p.app_id, 'job.succeeded'))[0]);
  const { deliveries } = (await (await get(p.app_id, '/api/deliveries')).json()) as {
    deliveries: { event_type: string; payload: unknown }[];
  };
  assert.equal(
    deliveries.map((d) => [d.event_type, d.payload]),
    [['order.paid', { type: 'order.paid', order: 42 }]],
  );
  const forged = await send(undefined, {
    WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  });
  assert.is(forged.code, 1);
  assert.match(forged.out, /^401 /);
});

test.after(async () => {
  await runner.stop();
  page.close();
  await live.close();
  await h.close();
});
test.run();
