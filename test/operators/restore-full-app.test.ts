/**
 * The round trip on an app that has had everything: app users and sessions, finished and failed
 * jobs, a webhook delivered to a job, events, rows with an index, files in Postgres and in the S3
 * bucket, a secret, a preview and a custom domain. `admin backup`, then `admin restore` into an empty
 * database: every table holds what it held, and the restored server serves all of it. A second
 * restore over it refuses and names what is there.
 */
import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Runner } from 'graphile-worker';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, type Harness, newUser } from '../_lib/harness.ts';
import { eventsOf, waitFor } from '../_lib/apps.ts';
import { startWorker } from '../_lib/mail.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';
import { startS3 } from '../_lib/s3-server.ts';

const run = promisify(execFile);
const s3 = await startS3();
const h = await createHarness({ ...s3.env, PLATFORM_SANDBOX_WORKERS: '2' });
const scratch = path.resolve('.data', 'test-scratch', `restore-full-${process.pid}`);
const targetDb = `restore_full_${process.pid}`;
const sourceUrl = process.env.TEST_DATABASE_URL!;
const targetUrl = (() => {
  const u = new URL(sourceUrl);
  u.pathname = `/${targetDb}`;
  return u.toString();
})();
let worker: Runner | undefined;
let restored: Harness | undefined;

const SERVER = `export default {
  async fetch(request, ctx) {
    const u = new URL(request.url);
    const notes = ctx.data.collection('notes');
    if (u.pathname === '/note') return Response.json(await notes.create({ title: await request.text() }));
    if (u.pathname === '/indexed') {
      let found = 0;
      const all = await notes.list({ limit: 1000 });
      for (const row of all) found += (await notes.list({ where: { title: row.title } })).filter((r) => r.id === row.id).length;
      return Response.json({ rows: all.length, found });
    }
    if (u.pathname === '/secret') return new Response(ctx.secrets.get('API_TOKEN'));
    if (u.pathname === '/upload') {
      const f = await ctx.files.store('pics').createUpload(await request.text(), { filename: 'p.txt', content_type: 'text/plain' });
      return Response.json({ url: ctx.files.store('pics').getPublicUrl(f.file_id) });
    }
    if (u.pathname === '/enqueue') return Response.json(await ctx.jobs.enqueue(u.searchParams.get('job'), {}));
    if (u.pathname === '/me') return Response.json({ user: ctx.auth.currentUser(request) });
    if (u.pathname === '/bindings' && request.method === 'POST') {
      await ctx.CACHE.put('k', 'kv value', { metadata: { m: 1 } });
      await ctx.BUCKET.put('o.txt', 'r2 value', { customMetadata: { c: '2' } });
      // larger than one chunk: kept as two pieces
      await ctx.BUCKET.put('big.txt', 'b'.repeat(5 * 1024 * 1024) + 'end');
      await ctx.Q.send({ waiting: true });
      return new Response('stored');
    }
    if (u.pathname === '/bindings') {
      const o = await ctx.BUCKET.get('o.txt');
      const big = await (await ctx.BUCKET.get('big.txt')).text();
      return Response.json({ kv: await ctx.CACHE.getWithMetadata('k', 'text'), r2: [await o.text(), o.customMetadata], big: [big.length, big.slice(-4)] });
    }
    return new Response('live');
  },
  async job(event, ctx) {
    if (event.job_name === 'bad') throw new Error('this job fails on purpose');
    ctx.log.info('job ran', { job: event.job_name });
  },
  async webhook(event) { return Response.json({ thanks: event.webhook_name }); },
};`;

const RESOURCES = {
  secrets: { required: ['API_TOKEN'] },
  data: {
    collections: {
      notes: { fields: { title: 'string' }, indexes: [{ name: 'by_title', fields: ['title'] }] },
    },
  },
  files: { stores: { pics: { public: true } } },
  auth: { mode: 'app_users', public_signup: true },
  jobs: { good: {}, bad: { max_attempts: 1 }, ingest: {} },
  webhooks: {
    direct: { provider: 'none' },
    queued: { provider: 'none', deliver_to: 'job:ingest' },
  },
};

const bundle = (page: string) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', page),
      file('server.js', SERVER, 'text/javascript'),
      // a KV namespace, an R2 bucket and a queue nothing consumes yet (its message waits)
      file(
        '.platform/bindings.json',
        JSON.stringify({
          kv_namespaces: [{ binding: 'CACHE' }],
          r2_buckets: [{ binding: 'BUCKET', bucket_name: 'restored' }],
          queues: { producers: [{ binding: 'Q', queue: 'waiting' }] },
        }),
        'application/json',
      ),
    ],
    resources: RESOURCES,
  });

/** Rows per table, the platform's and the job queue's: what a restore must give back. */
async function tableCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string; name: string }>(
      `select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind = 'r' and n.nspname in ('public', 'graphile_worker') order by 1, 2`,
    );
    const counts: Record<string, number> = {};
    for (const t of rows) {
      if (
        [
          'platform_migrations',
          'migrations',
          'node_heartbeats',
          'worker_heartbeats',
          'secrets_key_check',
          'backup_runs',
        ].includes(t.name)
      )
        continue;
      const r = await client.query<{ n: number }>(
        `select count(*)::int as n from "${t.schema}"."${t.name}"`,
      );
      counts[`${t.schema}.${t.name}`] = r.rows[0]!.n;
    }
    return counts;
  } finally {
    await client.end();
  }
}

async function backupRunsIn(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query('select status, trigger from backup_runs');
  await client.end();
  return rows;
}

async function admin(env: Record<string, string>, ...args: string[]) {
  const full: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PLATFORM_LOG_LEVEL: 'silent',
    PLATFORM_DATA_DIR: scratch,
    PLATFORM_SECRETS_KEY: h.config.secretsKey!,
    ...s3.env,
    ...env,
  };
  delete full.TEST_DATABASE_URL;
  const out = await run(process.execPath, [...ADMIN_ARGS, ...args], { env: full }).catch((e) => e);
  const last = String(out.stdout).trim().split('\n').pop()!;
  return {
    code: (out.code as number | undefined) ?? 0,
    json: JSON.parse(last || '{}'),
    out: `${out.stdout}${out.stderr}`,
  };
}

test('an app with users, jobs, webhooks, rows, files in both stores, a preview and a domain: restored whole', async () => {
  const u = await newUser(h, 'restore');
  const key = u.api_key;
  // custom domains come with a paid plan
  await h.deps.db
    .updateTable('accounts')
    .set({ plan_key: 'business' })
    .where('id', '=', u.account_id)
    .execute();
  const first = await h.call('PUT', '/v0/apps', { key, body: site() });
  const appId = first.body.app_id as string;
  const host = `${appId}.apps.localhost`;
  const set = await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, {
    key,
    body: { value: 'tok_restore_1' },
  });
  assert.is(set.status, 200, set.text);
  const live = await h.call('PUT', `/v0/apps/${appId}`, { key, body: bundle('live page') });
  assert.is(live.body.activation?.status, 'live', live.text);
  const preview = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: bundle('preview page'),
  });
  assert.is(preview.status, 200, preview.text);
  const domain = await h.call('POST', `/v0/apps/${appId}/domains`, {
    key,
    body: { hostname: 'shop.restore.test' },
  });
  assert.is(domain.status, 201, domain.text);

  for (const t of ['alpha', 'beta', 'gamma'])
    assert.is((await h.call('POST', '/note', { host, rawBody: t })).status, 200);
  const bound = await h.call('POST', '/bindings', { host });
  assert.is(bound.text, 'stored');
  const boundBefore = (await h.call('GET', '/bindings', { host })).body;
  const inPostgres = (await h.call('POST', '/upload', { host, rawBody: 'bytes kept in postgres' }))
    .body.url as string;
  // a node writing new bytes to the bucket, on the same database
  const s3Node = await createHarness({
    ...s3.env,
    PLATFORM_BLOB_STORE: 's3',
    PLATFORM_SECRETS_KEY: h.config.secretsKey!,
  });
  const inBucket = (
    await s3Node.call('POST', '/upload', { host, rawBody: 'bytes kept in the bucket' })
  ).body.url as string;
  await s3Node.close();
  const stored = await h.deps.pool.query<{ stored_in: string; n: number }>(
    'select stored_in, count(*)::int as n from blobs group by 1 order by 1',
  );
  assert.equal(
    stored.rows.map((r) => r.stored_in),
    ['postgres', 's3'],
    'blobs in both stores',
  );

  const signup = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'visitor@example.com', password: 'correct horse battery' },
  });
  assert.is(signup.status, 201, signup.text);
  const appCookie = signup.headers.get('set-cookie')!.split(';')[0]!;

  worker = await startWorker(h);
  await h.call('GET', '/enqueue?job=good', { host });
  await h.call('GET', '/enqueue?job=bad', { host });
  const direct = await h.call('POST', '/_platform/webhooks/direct', {
    host,
    rawBody: '{"a":1}',
    headers: { 'content-type': 'application/json', 'webhook-id': 'msg_direct_1' },
  });
  assert.is(direct.status, 200, direct.text);
  const queued = await h.call('POST', '/_platform/webhooks/queued', {
    host,
    rawBody: '{"b":2}',
    headers: { 'content-type': 'application/json', 'webhook-id': 'msg_queued_1' },
  });
  assert.ok(queued.status < 300, queued.text);
  await waitFor(async () => (await eventsOf(h, key, appId, 'job.succeeded')).length >= 2, 30_000);
  await waitFor(async () => (await eventsOf(h, key, appId, 'job.failed')).length >= 1, 30_000);
  await worker.stop();
  worker = undefined;
  await h.server.runtime.events.flush();

  const before = await tableCounts(sourceUrl);
  for (const t of [
    'public.app_users',
    'public.app_sessions',
    'public.usage_counters',
    'public.app_events',
    'public.webhook_deliveries',
    'public.app_routes',
    'public.app_events',
    'public.kv_entries',
    'public.r2_objects',
    'public.queue_messages',
  ])
    if (t in before) assert.ok(before[t]! > 0, `${t} has rows to restore`);
  assert.ok(before['public.usage_counters']! > 0);

  const dir = path.join(scratch, 'backups');
  const backup = await admin({ DATABASE_URL: sourceUrl }, 'backup', '--to', dir);
  assert.is(backup.code, 0, backup.out);
  const [archive] = await readdir(dir);

  await h.deps.pool.query(`create database ${targetDb}`);
  const restore = await admin({ DATABASE_URL: targetUrl }, 'restore', path.join(dir, archive!));
  assert.is(restore.code, 0, restore.out);
  console.log(
    `restore of the full app: ${restore.json.rows} rows in ${restore.json.tables} tables, ${restore.json.duration_ms} ms`,
  );
  assert.equal(await tableCounts(targetUrl), before, 'every table holds what it held');
  const runs = await backupRunsIn(targetUrl);
  assert.equal(
    runs,
    [{ status: 'succeeded', trigger: 'admin' }],
    "the archive's own run reads as done",
  );

  restored = await createHarness({
    ...s3.env,
    DATABASE_URL: targetUrl,
    PLATFORM_SECRETS_KEY: h.config.secretsKey!,
  });
  const r = restored;
  assert.is((await r.call('GET', '/', { host })).text, 'live page');
  // the KV entry, the R2 object (its bytes a blob like the files') and the waiting message are back
  assert.equal((await r.call('GET', '/bindings', { host })).body, boundBefore);
  assert.equal(boundBefore, {
    kv: { value: 'kv value', metadata: { m: 1 }, cacheStatus: null },
    r2: ['r2 value', { c: '2' }],
    big: [5 * 1024 * 1024 + 3, 'bend'],
  });
  assert.is(
    (await r.call('GET', '/secret', { host })).text,
    'tok_restore_1',
    'the secret decrypts',
  );
  assert.equal(
    (await r.call('GET', '/indexed', { host })).body,
    { rows: 3, found: 3 },
    'rows and their index',
  );
  assert.is(
    (await r.call('GET', new URL(inPostgres).pathname, { host })).text,
    'bytes kept in postgres',
  );
  assert.is(
    (await r.call('GET', new URL(inBucket).pathname, { host })).text,
    'bytes kept in the bucket',
  );
  assert.is(
    (await r.call('GET', '/me', { host, headers: { cookie: appCookie } })).body.user?.email,
    'visitor@example.com',
    'the app user is still signed in',
  );
  const login = await r.call('POST', '/_platform/auth/login', {
    host,
    body: { email: 'visitor@example.com', password: 'correct horse battery' },
  });
  assert.is(login.status, 200, login.text);
  assert.is((await eventsOf(r, key, appId, 'job.failed'))[0]?.metadata.job_name ?? 'bad', 'bad');
  assert.ok((await eventsOf(r, key, appId, 'job.succeeded')).length >= 2, 'job history is back');
  const releases = await r.call('GET', `/v0/apps/${appId}/releases`, { key });
  assert.ok(
    releases.body.releases.some(
      (x: { release_id: string }) => x.release_id === preview.body.release_id,
    ),
    'the preview release is back',
  );
  const domains = await r.call('GET', `/v0/apps/${appId}/domains`, { key });
  assert.equal(
    domains.body.domains.map((d: { hostname: string }) => d.hostname),
    ['shop.restore.test'],
  );

  // the restored server counts on from the restored counters, and a new app user is counted once
  const again = await r.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'second@example.com', password: 'correct horse battery' },
  });
  assert.is(again.status, 201, again.text);
  await r.close();
  restored = undefined;

  const over = await admin({ DATABASE_URL: targetUrl }, 'restore', path.join(dir, archive!));
  assert.is(over.code, 1, over.out);
  assert.is(over.json.error.code, 'invalid_request');
  assert.match(over.json.error.message, /is not empty: it holds .*accounts \(\d+ rows?\)/);
  assert.match(over.json.error.message, /apps \(\d+ rows?\)/);
  assert.match(over.json.error.message, /empty data dir or database; nothing was changed/);
  const after = await tableCounts(targetUrl);
  assert.is(
    after['public.app_users'],
    before['public.app_users']! + 1,
    'the refused restore changed nothing',
  );
});

test.after(async () => {
  await worker?.stop();
  await restored?.close();
  await h.close();
  const admin = new pg.Client({ connectionString: sourceUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${targetDb} with (force)`).catch(() => {});
  await admin.end();
  await s3.close();
  await rm(scratch, { recursive: true, force: true });
});
test.run();
