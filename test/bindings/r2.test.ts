/**
 * Workers R2: an app that calls every operation (test/fixtures/bindings/r2-app: put in each body
 * type, metadata, checksums, conditions, ranges, list with delimiters and pages, multipart) is
 * published unchanged and answers every probe as the same module under Miniflare does. Then: the
 * objects are the app's alone, their bytes in the S3 bucket the blob store is set to, counted in
 * its storage.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
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
    join r2_objects o on o.sha256 = b.sha256 where o.app_id = ${appId} and b.stored_in = 's3'`.execute(
    h.deps.db,
  );
  assert.ok(
    rows[0]!.n >= bucket.count - 2,
    'the bytes are in the bucket (equal bodies share a blob)',
  );
  assert.ok((await s3.keys()).length >= rows[0]!.n);
});

test.after(async () => {
  await live.close();
  await h.close();
  await s3.close();
});

test.run();
