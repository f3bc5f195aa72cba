/**
 * Release and app file bytes in an S3-compatible bucket (PLATFORM_BLOB_STORE=s3), against a real
 * S3-protocol server on loopback: bytes are written before the release commits, served from the
 * bucket (large ones streamed), deduplicated, deleted by retention when nothing needs them (orphan
 * objects swept), and moved between Postgres and the bucket by `npm run admin -- migrate-blobs`
 * while serving.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pruneBlobs, sweepOrphanObjects } from '../../src/blobs/retention.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser, type Harness } from '../_lib/harness.ts';
import { startS3 } from '../_lib/s3-server.ts';
import { waitFor } from '../_lib/apps.ts';
import { liveNodes, startNodeHeartbeat } from '../../src/nodes/heartbeat.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';

const s3 = await startS3();
const h = await createHarness({ PLATFORM_BLOB_STORE: 's3', ...s3.env });
const u = await newUser(h);

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const HTML = `<!doctype html><h1>${'in the bucket '.repeat(200)}</h1>`;
const BIG = randomBytes(6 * 1024 * 1024); // above the in-memory cache's per-file bound: streamed from the bucket
const SERVER = `export default {
  async fetch(req, ctx) {
    if (new URL(req.url).pathname === '/upload') {
      const rec = await ctx.files.store('pics').createUpload(new Uint8Array(await req.arrayBuffer()), { filename: 'up.bin', content_type: 'application/octet-stream' });
      return Response.json({ ...rec, url: ctx.files.store('pics').getPublicUrl(rec.file_id) });
    }
    return new Response('server from the bucket');
  },
};`;
const body = (html = HTML) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', html),
      file('public/big.bin', BIG, 'application/octet-stream'),
      file('server.js', SERVER, 'text/javascript'),
    ],
    resources: { files: { stores: { pics: { public: true } } } },
  });
const rowsOf = (accountId: string) =>
  h.deps.db
    .selectFrom('blobs')
    .select(['sha256', 'stored_in', sql<boolean>`data is null`.as('no_data')])
    .where('account_id', '=', accountId)
    .execute();
const objectOf = (accountId: string, hex: string) => `blobs/${accountId}/${hex}`;
const get = (hx: Harness, appId: string, p: string, headers: Record<string, string> = {}) =>
  hx.call('GET', p, { host: `${appId}.apps.localhost`, headers });

let appId = '';

test('a publish writes every file and compressed variant to the bucket; the rows hold no bytes; the app serves from it', async () => {
  const r = await h.call('PUT', '/v0/apps', { key: u.api_key, body: body() });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.status, 'published', JSON.stringify(r.body.activation));
  appId = r.body.app_id;
  const keys = await s3.keys();
  for (const b of [HTML, BIG, SERVER])
    assert.ok(keys.includes(objectOf(u.account_id, sha(b))), `object for ${sha(b).slice(0, 8)}`);
  const rows = await rowsOf(u.account_id);
  assert.ok(rows.length >= 4, 'the files and at least the HTML variants');
  assert.ok(
    rows.every((row) => row.stored_in === 's3' && row.no_data),
    'no bytes in Postgres',
  );
  for (const row of rows)
    assert.ok(keys.includes(objectOf(u.account_id, row.sha256.toString('hex'))));

  const page = await get(h, appId, '/');
  assert.is(page.text, HTML);
  const br = await h.call('GET', '/', {
    host: `${appId}.apps.localhost`,
    headers: { 'accept-encoding': 'br' },
  });
  assert.is(br.headers.get('content-encoding'), 'br');
  const raw = await h.server.request(`http://${appId}.apps.localhost/`, {
    headers: { 'accept-encoding': 'br' },
  });
  assert.is(brotliDecompressSync(Buffer.from(await raw.arrayBuffer())).toString(), HTML);
  const big = await h.server.request(`http://${appId}.apps.localhost/big.bin`);
  assert.is(big.headers.get('content-length'), String(BIG.length));
  assert.ok(Buffer.from(await big.arrayBuffer()).equals(BIG), 'the large file streams back whole');
  assert.is(
    (await get(h, appId, '/dynamic')).text,
    'server from the bucket',
    'the server module is read from the bucket',
  );
});

test('an identical republish uploads nothing; an app file upload goes to the bucket and downloads', async () => {
  const before = await s3.keys();
  const again = await h.call('PUT', `/v0/apps/${appId}`, { key: u.api_key, body: body() });
  assert.is(again.status, 200);
  assert.equal(await s3.keys(), before);

  const bytes = randomBytes(5 * 1024 * 1024);
  const up = await h.call('POST', '/upload', {
    host: `${appId}.apps.localhost`,
    rawBody: bytes,
    headers: { 'content-type': 'application/octet-stream' },
  });
  assert.is(up.status, 200, up.text);
  assert.ok((await s3.keys()).includes(objectOf(u.account_id, sha(bytes))));
  const down = await h.server.request(
    `http://${appId}.apps.localhost${new URL(up.body.url, 'http://x').pathname}`,
  );
  assert.is(down.status, 200);
  assert.ok(Buffer.from(await down.arrayBuffer()).equals(bytes));
});

test('a failed upload leaves no release, and the live one keeps serving', async () => {
  const broken = await createHarness({
    PLATFORM_BLOB_STORE: 's3',
    ...s3.env,
    PLATFORM_S3_BUCKET: 'no-such-bucket',
  });
  try {
    const count = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from releases where app_id = ${appId}`.execute(h.deps.db)
        ).rows[0]!.n,
      );
    const before = await count();
    const r = await broken.call('PUT', `/v0/apps/${appId}`, {
      key: u.api_key,
      body: body('<h1>never stored</h1>'),
    });
    assert.ok(r.status >= 500, `refused: ${r.status} ${r.text}`);
    assert.is(r.body.error.code, 'internal_error');
    assert.is(await count(), before, 'no release row');
    assert.is(
      await sql<{
        n: number;
      }>`select count(*)::int as n from blobs where sha256 = ${createHash('sha256').update('<h1>never stored</h1>').digest()}`
        .execute(h.deps.db)
        .then((x) => x.rows[0]!.n),
      0,
      'no blob row',
    );
    assert.is((await get(h, appId, '/')).text, HTML);
  } finally {
    await broken.close();
  }
});

test('retention deletes rows and objects nothing needs (after the grace period); orphan objects are swept', async () => {
  const v = await newUser(h);
  const first = await h.call('PUT', '/v0/apps', {
    key: v.api_key,
    body: site({ files: [file('public/index.html', '<h1>old</h1>')] }),
  });
  const id = first.body.app_id as string;
  await h.call('PUT', `/v0/apps/${id}`, {
    key: v.api_key,
    body: site({ files: [file('public/index.html', '<h1>new</h1>')] }),
  });
  const oldKey = objectOf(v.account_id, sha('<h1>old</h1>'));
  const newKey = objectOf(v.account_id, sha('<h1>new</h1>'));
  // the old release goes, as releases retention removes it
  await h.deps.db
    .deleteFrom('release_files')
    .where('release_id', '=', first.body.release_id)
    .execute();
  await h.deps.db.deleteFrom('releases').where('id', '=', first.body.release_id).execute();

  assert.is(await pruneBlobs(h.deps, v.account_id), 0, 'used within the grace period: kept');
  const later = new Date(Date.now() + 2 * 60 * 60 * 1000);
  assert.is(await pruneBlobs(h.deps, v.account_id, later), 1);
  const keys = await s3.keys();
  assert.not.ok(keys.includes(oldKey), 'its object is deleted');
  assert.ok(keys.includes(newKey), 'the live release keeps its object');
  // app files keep their bytes too (u's upload above)
  await pruneBlobs(h.deps, u.account_id, later);
  assert.is((await get(h, appId, '/')).text, HTML);
  assert.ok((await s3.keys()).some((k) => k.startsWith(`blobs/${u.account_id}/`)));

  // an object no row names (an upload whose publish rolled back) is swept after the grace period
  const orphan = objectOf(v.account_id, 'ab'.repeat(32));
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: orphan, Body: 'lost' }));
  assert.is((await sweepOrphanObjects(h.deps)).deleted, 0, 'young: kept');
  const swept = await sweepOrphanObjects(h.deps, later);
  assert.is(swept.deleted, 1);
  assert.not.ok((await s3.keys()).includes(orphan));
  assert.ok((await s3.keys()).includes(newKey));
  client.destroy();
});

test('migrate-blobs --to s3 refuses, naming them, while a live node cannot read the bucket; every file still serves', async () => {
  const blind = await createHarness(); // serving with no PLATFORM_S3_* settings
  const beat = startNodeHeartbeat(blind.deps, 'all');
  try {
    const w = await newUser(blind);
    const pub = await blind.call('PUT', '/v0/apps', {
      key: w.api_key,
      body: site({ files: [file('public/index.html', '<h1>stays readable</h1>')] }),
    });
    const id = pub.body.app_id as string;
    await waitFor(async () =>
      (await liveNodes(blind.deps.db)).some((n) => n.node_id === beat.nodeId),
    );
    const refused = await promisify(execFile)(
      process.execPath,
      [...ADMIN_ARGS, 'migrate-blobs', '--to', 's3'],
      {
        env: {
          ...process.env,
          DATABASE_URL: h.config.databaseUrl,
          PLATFORM_LOG_LEVEL: 'warn',
          ...s3.env,
        },
      },
    ).then(
      () => assert.unreachable('migrate-blobs ran with a blind node serving') as never,
      (err: { code: number; stdout: string }) => err,
    );
    assert.is(refused.code, 1);
    const answer = JSON.parse(refused.stdout.trim().split('\n').pop()!);
    assert.is(answer.error.code, 'conflict');
    assert.match(answer.error.message, `pid ${process.pid} (all, no bucket)`);
    assert.ok(
      (await rowsOf(w.account_id)).every((r) => r.stored_in === 'postgres'),
      'nothing was moved',
    );
    const page = await get(blind, id, '/');
    assert.is(page.status, 200);
    assert.is(page.text, '<h1>stays readable</h1>');
  } finally {
    await beat.stop();
    await blind.close();
  }
  assert.not.ok(
    (await liveNodes(h.deps.db)).some((n) => n.node_id === beat.nodeId),
    'a node that stops removes its row',
  );
});

test('migrate-blobs moves Postgres blobs to the bucket and back while they keep serving', async () => {
  const pg = await createHarness(); // a node that still writes to Postgres
  try {
    const w = await newUser(pg);
    const pub = await pg.call('PUT', '/v0/apps', {
      key: w.api_key,
      body: site({
        files: [
          file('public/index.html', '<h1>moving</h1>'),
          file('public/data.bin', randomBytes(1000), 'application/octet-stream'),
        ],
      }),
    });
    const id = pub.body.app_id as string;
    assert.ok((await rowsOf(w.account_id)).every((r) => r.stored_in === 'postgres'));
    const admin = (to: string) =>
      promisify(execFile)(process.execPath, [...ADMIN_ARGS, 'migrate-blobs', '--to', to], {
        env: {
          ...process.env,
          DATABASE_URL: h.config.databaseUrl,
          PLATFORM_LOG_LEVEL: 'warn',
          ...s3.env,
        },
      });
    const out = JSON.parse((await admin('s3')).stdout.trim().split('\n').pop()!);
    assert.ok(out.moved >= 2, JSON.stringify(out));
    const moved = await rowsOf(w.account_id);
    assert.ok(moved.every((r) => r.stored_in === 's3' && r.no_data));
    for (const r of moved)
      assert.ok((await s3.keys()).includes(objectOf(w.account_id, r.sha256.toString('hex'))));
    // a node with a cold cache reads each row where it now says
    const fresh = await createHarness({ ...s3.env });
    try {
      assert.is((await get(fresh, id, '/')).text, '<h1>moving</h1>');
    } finally {
      await fresh.close();
    }
    const back = JSON.parse((await admin('postgres')).stdout.trim().split('\n').pop()!);
    assert.ok(back.moved >= out.moved);
    assert.ok((await rowsOf(w.account_id)).every((r) => r.stored_in === 'postgres' && !r.no_data));
    assert.not.ok(
      (await s3.keys()).some((k) => k.startsWith(`blobs/${w.account_id}/`)),
      'objects deleted once the rows hold the bytes',
    );
    const cold = await createHarness();
    try {
      assert.is((await get(cold, id, '/')).text, '<h1>moving</h1>');
    } finally {
      await cold.close();
    }
  } finally {
    await pg.close();
  }
});

test.after(async () => {
  await h.close();
  await s3.close();
});
test.run();
