/**
 * Workers KV: an app that calls every operation (test/fixtures/bindings/kv-app, a wrangler project
 * with two namespaces) is published unchanged by the CLI and answers every probe exactly as the
 * same module under Miniflare, `wrangler dev`'s runtime, answers it. Then what the platform owes
 * beyond Miniflare: the data is the app's alone, kept across releases, never read once expired,
 * counted in the app's storage and erased with its data.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { sweepExpiredKv } from '../../src/bindings/kv.ts';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `kv-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/kv-app');
const PROBES = ['basics', 'metadata', 'bulk', 'list', 'keys', 'large'];

const onApp = async (appId: string, p: string) => {
  const r = await h.call('GET', `/${p}`, { host: `${appId}.apps.localhost` });
  return { status: r.status, body: r.text };
};

let appId = '';

test('the KV probe app publishes unchanged and answers as under Miniflare', async () => {
  const dir = path.join(work, 'kv-app');
  await cp(FIXTURE, dir, { recursive: true });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /KV namespaces CACHE, OTHER: kept by the platform/, r.stderr);
  appId = await linkedApp(dir);
  const control = await startMiniflare(path.join(FIXTURE, 'src/index.js'), {
    kvNamespaces: ['CACHE', 'OTHER'],
  });
  try {
    for (const p of PROBES) {
      const theirs = await control.fetch(`/${p}`);
      const mine = await onApp(appId, p);
      const expected = await theirs.text();
      assert.is(mine.status, theirs.status, `${p}: ${mine.body}`);
      assertSameAnswers(p, JSON.parse(mine.body), JSON.parse(expected));
    }
  } finally {
    await control.stop();
  }
});

test('another app binding the same name sees none of it; a new release keeps it', async () => {
  const other = await writeProject(work, 'kv-other', {
    'wrangler.jsonc': JSON.stringify({
      name: 'kv-other',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'CACHE', id: 'x' }],
    }),
    'src/index.js': `export default { async fetch(req, env) {
      const u = new URL(req.url);
      if (u.searchParams.has('put')) await env.CACHE.put('shared', u.searchParams.get('put'));
      return Response.json({ mine: await env.CACHE.get('shared'), j: await env.CACHE.get('j'), keys: (await env.CACHE.list()).keys.length });
    } }`,
  });
  const r = await cli(['publish'], { cwd: other });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const otherId = await linkedApp(other);
  const seen = await h.call('GET', '/?put=theirs', { host: `${otherId}.apps.localhost` });
  assert.equal(seen.body, { mine: 'theirs', j: null, keys: 1 });
  // the probe app still has its own `j`, and not the other app's `shared`
  const dir = path.join(work, 'kv-app');
  const again = await cli(['publish', '--message', 'second release'], { cwd: dir });
  assert.is(again.code, 0, again.stdout + again.stderr);
  const probe = await writeProject(work, 'kv-reader', {
    'wrangler.jsonc': JSON.stringify({
      name: 'kv-reader',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'CACHE' }],
    }),
    'src/index.js': `export default { async fetch(req, env) { return Response.json({ j: await env.CACHE.get('j', 'json'), shared: await env.CACHE.get('shared') }); } }`,
  });
  await cp(path.join(dir, '.platform'), path.join(probe, '.platform'), { recursive: true });
  const third = await cli(['publish'], { cwd: probe });
  assert.is(third.code, 0, third.stdout + third.stderr);
  assert.is(await linkedApp(probe), appId, 'published as the same app');
  const read = await h.call('GET', '/', { host: `${appId}.apps.localhost` });
  assert.equal(read.body, { j: { a: [1, 2] }, shared: null });
});

test('an expired key is never read, and the sweep deletes it', async () => {
  await sql`update kv_entries set expires_at = now() - interval '1 second'
    where app_id = ${appId} and namespace = 'CACHE' and key = ${Buffer.from('j')}`.execute(
    h.deps.db,
  );
  const read = await h.call('GET', '/', { host: `${appId}.apps.localhost` });
  assert.equal(read.body, { j: null, shared: null });
  assert.ok((await sweepExpiredKv(h.deps)) >= 1);
  const left = await sql<{ n: number }>`select count(*)::int as n from kv_entries
    where app_id = ${appId} and key = ${Buffer.from('j')}`.execute(h.deps.db);
  assert.is(left.rows[0]!.n, 0);
});

test('a bindings file the platform cannot read refuses the publish', async () => {
  const bad = (text: string) =>
    h.call('PUT', '/v0/apps', {
      key: u.api_key,
      body: {
        app: { name: 'bad-bindings' },
        runtime: { static_root: 'public', server_entry: 'server.js', fallback: 'server' },
        files: [
          {
            path: 'public/index.html',
            content_type: 'text/html',
            content_base64: Buffer.from('<p>hi').toString('base64'),
          },
          {
            path: 'server.js',
            content_type: 'text/javascript',
            content_base64: Buffer.from(
              'export default { fetch() { return new Response("x"); } }',
            ).toString('base64'),
          },
          {
            path: '.platform/bindings.json',
            content_type: 'application/json',
            content_base64: Buffer.from(text).toString('base64'),
          },
        ],
      },
    });
  for (const [text, why] of [
    ['{not json', /is not JSON/],
    ['{"kv_namespaces":[{"binding":"not a name"}]}', /JavaScript identifier/],
    ['{"kv_namespaces":[{"binding":"A"},{"binding":"A"}]}', /declared twice/],
    ['{"hyperdrive":[]}', /hyperdrive/],
  ] as const) {
    const r = await bad(text);
    assert.is(r.status, 400, r.text);
    assert.is(r.body.error.code, 'invalid_resource_manifest');
    assert.match(r.body.error.message, why);
  }
});

test("KV keys count in the account's storage and go when the app's data is erased", async () => {
  const before = await sql<{
    n: number;
    bytes: number;
  }>`select count(*)::int as n, coalesce(sum(size), 0)::int as bytes
    from kv_entries where app_id = ${appId}`.execute(h.deps.db);
  assert.ok(
    before.rows[0]!.n > 10 && before.rows[0]!.bytes > 3 * 1024 * 1024,
    'the large value is there',
  );
  const { measureApp } = await import('../../src/storage/measure.ts');
  const stored = await measureApp(h.deps.db, appId);
  assert.ok(stored.kv.get('CACHE')!.bytes >= 3 * 1024 * 1024);
  assert.ok(stored.bytes >= stored.kv.get('CACHE')!.bytes);
  const gone = await h.call('DELETE', `/v0/apps/${appId}`, { key: u.api_key });
  assert.ok(gone.status < 300, gone.text);
  const erased = await h.call('POST', `/v0/apps/${appId}/erase`, {
    key: u.api_key,
    body: { confirm: appId },
  });
  assert.is(erased.status, 200, erased.text);
  assert.is(erased.body.erased.kv_keys, before.rows[0]!.n);
  const after = await sql<{
    n: number;
  }>`select count(*)::int as n from kv_entries where app_id = ${appId}`.execute(h.deps.db);
  assert.is(after.rows[0]!.n, 0);
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();
