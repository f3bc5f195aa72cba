/**
 * Workers R2: an app that calls every operation (test/fixtures/bindings/r2-app: put in each body
 * type, metadata, checksums, conditions, ranges, list with delimiters and pages, multipart) is
 * published unchanged and answers every probe as the same module under Miniflare does. Then: the
 * objects are the app's alone, their bytes in the S3 bucket the blob store is set to, counted in
 * its storage.
 */
import { createHash } from 'node:crypto';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pruneBlobs } from '../../src/blobs/retention.ts';
import { measureApp } from '../../src/storage/measure.ts';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { startS3 } from '../_lib/s3-server.ts';
import { eventsOf } from '../_lib/apps.ts';

// the objects' bytes go to the S3 test server, as with PLATFORM_BLOB_STORE=s3 in production
const s3 = await startS3();
const h = await createHarness({ PLATFORM_BLOB_STORE: 's3', ...s3.env });
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `r2-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/r2-app');
const PROBES = ['basics', 'checks', 'conditional', 'ranges', 'list', 'multipart'];
let appId = '';

test('the R2 probe app publishes unchanged and answers as under Miniflare', async () => {
  const dir = path.join(work, 'r2-app');
  await cp(FIXTURE, dir, { recursive: true });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /R2 bucket probe-bucket: kept by the platform/);
  appId = await linkedApp(dir);
  const control = await startMiniflare(path.join(FIXTURE, 'src/index.js'), {
    r2Buckets: ['BUCKET'],
  });
  try {
    for (const p of PROBES) {
      const theirs = await control.fetch(`/${p}`);
      const mine = await h.call('GET', `/${p}`, { host: `${appId}.apps.localhost` });
      if (mine.status !== theirs.status) {
        // the app's own error, to say why
        const errors = await eventsOf(h, u.api_key, appId, 'runtime.request_error');
        assert.unreachable(`${p}: ${mine.status}: ${JSON.stringify(errors[0]?.metadata)}`);
      }
      assertSameAnswers(p, JSON.parse(mine.text), await theirs.json());
    }
  } finally {
    await control.stop();
  }
});

test("another app's bucket of the same name is its own; objects count in storage", async () => {
  const other = await writeProject(work, 'r2-other', {
    'wrangler.jsonc': JSON.stringify({
      name: 'r2-other',
      main: 'src/index.js',
      r2_buckets: [{ binding: 'B', bucket_name: 'probe-bucket' }],
    }),
    'src/index.js': `export default { async fetch(req, env) {
      return Response.json({ one: await env.B.head('a/one.txt'), listed: (await env.B.list()).objects.length });
    } }`,
  });
  const r = await cli(['publish'], { cwd: other });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const seen = await h.call('GET', '/', { host: `${await linkedApp(other)}.apps.localhost` });
  assert.equal(seen.body, { one: null, listed: 0 });
  const stored = await measureApp(h.deps.db, appId);
  const bucket = stored.r2.get('probe-bucket')!;
  assert.ok(bucket.count >= 10, `objects: ${bucket.count}`);
  assert.ok(bucket.bytes > 5 * 1024 * 1024, 'the multipart object is counted');
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from blobs b
    join r2_objects o on o.sha256 = b.sha256 or o.pieces @> array[b.sha256]
    where o.app_id = ${appId} and b.stored_in = 's3'`.execute(h.deps.db);
  assert.ok(
    rows[0]!.n >= bucket.count - 2,
    'the bytes are in the bucket (equal bodies share a blob)',
  );
  assert.ok((await s3.keys()).length >= rows[0]!.n);
});

test('a large object streams in and out in chunks, never whole, as Miniflare answers it', async () => {
  // 9 MiB and a bit (an app request carries at most 10): chunks each way, pieces of unequal sizes
  const bytes = new Uint8Array(9 * 1024 * 1024 + 12345);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) & 0xff;
  bytes[bytes.length - 1] = 7;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const host = `${appId}.apps.localhost`;
  const mine = (path: string, init: RequestInit = {}) =>
    h.server.request(`http://${host}${path}`, init);
  const control = await startMiniflare(path.join(FIXTURE, 'src/index.js'), {
    r2Buckets: ['BUCKET'],
  });
  try {
    for (const fetchOf of [mine, (p: string, init?: RequestInit) => control.fetch(p, init)]) {
      const put = await fetchOf('/big/huge.bin', {
        method: 'PUT',
        body: bytes,
        headers: { 'content-length': String(bytes.length) },
      });
      assert.is(put.status, 200, await put.clone().text());
    }
    const answers = async (p: string) => {
      const [a, b] = [await mine(p), await control.fetch(p)];
      assert.is(a.status, b.status, p);
      return [a, b] as const;
    };
    const [gotMine, gotTheirs] = await answers('/big/huge.bin?digest=1');
    const digest = (await gotMine.json()) as { sha256: string; size: number; etag: string };
    assertSameAnswers('digest', digest, await gotTheirs.json());
    assert.is(digest.sha256, sha256);
    assert.is(digest.etag, createHash('md5').update(bytes).digest('hex'), "R2's etag: the MD5");
    // the body as a stream, through the response: every byte, in order
    const [bodyMine, bodyTheirs] = await answers('/big/huge.bin');
    const streamed = Buffer.from(
      await bodyMine.arrayBuffer().catch(async (e) => {
        const errors = await eventsOf(h, u.api_key, appId, 'runtime.request_error');
        throw new Error(`${e}: ${JSON.stringify(errors[0]?.metadata)}`);
      }),
    );
    assert.is(createHash('sha256').update(streamed).digest('hex'), sha256);
    assert.is(bodyMine.headers.get('etag'), bodyTheirs.headers.get('etag'));
    await bodyTheirs.arrayBuffer();
    // a range across two pieces
    const offset = 4 * 1024 * 1024 - 100;
    const [rangeMine, rangeTheirs] = await answers(`/big/huge.bin?offset=${offset}&length=3000000`);
    const part = Buffer.from(await rangeMine.arrayBuffer());
    assert.ok(part.equals(Buffer.from(await rangeTheirs.arrayBuffer())), 'the same range');
    assert.ok(part.equals(Buffer.from(bytes.subarray(offset, offset + 3000000))));
  } finally {
    await control.stop();
  }
  const row = await h.deps.db
    .selectFrom('r2_objects')
    .select(['sha256', 'pieces', 'piece_sizes', 'size'])
    .where('app_id', '=', appId)
    .where('key', '=', Buffer.from('big/huge.bin'))
    .executeTakeFirstOrThrow();
  assert.is(row.sha256, null, 'no one blob holds the whole object');
  assert.is(row.pieces!.length, 3, 'stored in the chunks it came in');
  assert.is(Number(row.size), bytes.length);
  // the console's download streams it too, whole and with its length
  const dl = await h.server.request(
    `http://${h.config.hosts.api}/v0/apps/${appId}/r2/probe-bucket/object?key=big%2Fhuge.bin`,
    { headers: { authorization: `Bearer ${u.api_key}` } },
  );
  assert.is(dl.status, 200);
  assert.is(dl.headers.get('content-length'), String(bytes.length));
  assert.is(
    createHash('sha256')
      .update(Buffer.from(await dl.arrayBuffer()))
      .digest('hex'),
    sha256,
  );
  // retention keeps every piece an object names (with no grace at all)
  const app = await h.deps.db
    .selectFrom('apps')
    .select('account_id')
    .where('id', '=', appId)
    .executeTakeFirstOrThrow();
  await pruneBlobs(h.deps, app.account_id, new Date(), 0);
  const again = await mine('/big/huge.bin?digest=1');
  assert.is(((await again.json()) as { sha256: string }).sha256, sha256);
});

test.after(async () => {
  await live.close();
  await h.close();
  await s3.close();
});

test.run();
