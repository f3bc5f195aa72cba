/**
 * Compressed static files: brotli and gzip variants made once at publish, the best one the request's
 * Accept-Encoding allows (q-values, identity;q=0), a strong ETag per variant with 304s per variant,
 * HEAD, and types that are never compressed.
 */
import zlib from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prepareVariants } from '../../src/blobs/variants.ts';
import { validateBundle } from '../../src/manifest/validate.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { publishServerApp } from '../_lib/apps.ts';

const h = await createHarness();
const u = await newUser(h);
const page = `<!doctype html><title>Big</title>${'<p>The same words compress very well. '.repeat(600)}</p>`;
const json = JSON.stringify({
  items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item ${i}` })),
});
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(4000, 7)]);
const body = site({
  files: [
    file('public/index.html', page),
    file('public/data.json', json, 'application/json'),
    file('public/tiny.css', 'body{margin:0}', 'text/css'),
    file('public/logo.png', png, 'image/png'),
  ],
});
const published = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
const host = `${published.body.app_id}.apps.localhost`;
const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  h.server.request(`http://${host}${path}`, { method, headers });

test('brotli for a browser, gzip for an older client, the bytes decompress to the file; Vary and a distinct ETag each', async () => {
  const plain = await get('/');
  assert.is(plain.headers.get('content-encoding'), null);
  assert.is(plain.headers.get('vary'), 'accept-encoding');
  assert.is(await plain.text(), page);
  const etags = new Set([plain.headers.get('etag')]);
  for (let i = 0; i < 2; i++) {
    // twice: the first answer loads the bytes, the second comes from the in-memory fast path
    const br = await get('/', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    assert.is(br.headers.get('content-encoding'), 'br');
    assert.is(br.headers.get('vary'), 'accept-encoding');
    const brBytes = Buffer.from(await br.arrayBuffer());
    assert.ok(brBytes.length < page.length / 10, `${brBytes.length} bytes`);
    assert.is(zlib.brotliDecompressSync(brBytes).toString(), page);
    etags.add(br.headers.get('etag'));
    const gz = await get('/', { 'accept-encoding': 'gzip' });
    assert.is(gz.headers.get('content-encoding'), 'gzip');
    assert.is(zlib.gunzipSync(Buffer.from(await gz.arrayBuffer())).toString(), page);
    etags.add(gz.headers.get('etag'));
  }
  assert.is(etags.size, 3, 'identity, br and gzip each have their own strong ETag');
  const data = await get('/data.json', { 'accept-encoding': 'br' });
  assert.is(data.headers.get('content-encoding'), 'br');
  assert.equal(
    JSON.parse(zlib.brotliDecompressSync(Buffer.from(await data.arrayBuffer())).toString()),
    JSON.parse(json),
  );
});

test('q-values decide; identity;q=0 is respected; * means anything', async () => {
  const enc = async (accept: string, path = '/') => {
    const r = await get(path, { 'accept-encoding': accept });
    await r.arrayBuffer();
    return r.status === 406 ? 406 : (r.headers.get('content-encoding') ?? 'identity');
  };
  assert.is(await enc('br;q=0.5, gzip;q=0.8'), 'gzip');
  assert.is(await enc('gzip;q=0.9, br'), 'br');
  assert.is(await enc('br;q=0, gzip;q=0'), 'identity');
  assert.is(await enc('br;q=0.4, identity'), 'identity', 'identity (q=1) beats br at 0.4');
  assert.is(await enc('*'), 'br');
  assert.is(await enc('*;q=0, gzip'), 'gzip');
  assert.is(await enc('identity;q=0, gzip'), 'gzip');
  assert.is(await enc('deflate'), 'identity');
  assert.is(
    await enc('identity;q=0, br', '/logo.png'),
    'identity',
    'nothing to choose from: the file as it is',
  );
  assert.is(await enc('identity;q=0', '/'), 406);
});

test('types never compressed and small files go as they are, without Vary', async () => {
  for (const path of ['/logo.png', '/tiny.css']) {
    const r = await get(path, { 'accept-encoding': 'br, gzip' });
    assert.is(r.status, 200);
    assert.is(r.headers.get('content-encoding'), null, path);
    assert.is(r.headers.get('vary'), null, path);
    await r.arrayBuffer();
  }
});

test('304 per variant, and HEAD gives the variant length', async () => {
  const br = await get('/', { 'accept-encoding': 'br' });
  const brTag = br.headers.get('etag')!;
  const brLength = (await br.arrayBuffer()).byteLength;
  const again = await get('/', { 'accept-encoding': 'br', 'if-none-match': brTag });
  assert.is(again.status, 304);
  assert.is(again.headers.get('etag'), brTag);
  assert.is(again.headers.get('vary'), 'accept-encoding');
  const other = await get('/', { 'accept-encoding': 'gzip', 'if-none-match': brTag });
  assert.is(other.status, 200, 'the brotli ETag does not validate the gzip bytes');
  assert.is(other.headers.get('content-encoding'), 'gzip');
  await other.arrayBuffer();
  const head = await get('/', { 'accept-encoding': 'br' }, 'HEAD');
  assert.is(head.status, 200);
  assert.is(head.headers.get('content-encoding'), 'br');
  assert.is(head.headers.get('content-length'), String(brLength));
  assert.is((await head.arrayBuffer()).byteLength, 0);
});

test('variants are made once per content: an identical republish or another app with the same file compresses nothing', async () => {
  const rows = async () =>
    (
      await h.deps.db
        .selectFrom('blob_variants')
        .select('encoding')
        .where('account_id', '=', u.account_id)
        .execute()
    ).length;
  const before = await rows();
  assert.is(before, 4, 'br and gzip for the page and the JSON');
  assert.is(
    (await h.call('PUT', `/v0/apps/${published.body.app_id}`, { key: u.api_key, body })).status,
    200,
  );
  assert.is(
    (
      await h.call('PUT', '/v0/apps', {
        key: u.api_key,
        body: site({ app: { name: 'Twin' }, files: [file('public/index.html', page)] }),
      })
    ).status,
    200,
  );
  assert.is(await rows(), before);
  const valid = validateBundle(JSON.parse(JSON.stringify(body)));
  assert.equal(
    await prepareVariants(h.deps.db, u.account_id, valid.files),
    [],
    'nothing left to compress',
  );
  const other = await newUser(h);
  assert.is(
    (await prepareVariants(h.deps.db, other.account_id, valid.files)).length,
    2,
    'another account compresses its own',
  );
});

test('server answers are compressed on the fly, unless small, already encoded, no-transform, or refused', async () => {
  const big = JSON.stringify({
    rows: Array.from({ length: 200 }, (_, i) => ({ i, text: 'compress me please' })),
  });
  const app = await publishServerApp(
    h,
    u.api_key,
    `const big = ${JSON.stringify(big)};
    export default { fetch(req) {
      const p = new URL(req.url).pathname;
      if (p === '/big') return new Response(big, { headers: { 'content-type': 'application/json', etag: '"v1"', vary: 'origin' } });
      if (p === '/small') return Response.json({ ok: true });
      if (p === '/own') return new Response(big, { headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } });
      if (p === '/no-transform') return new Response(big, { headers: { 'content-type': 'application/json', 'cache-control': 'no-transform' } });
      if (p === '/binary') return new Response(new Uint8Array(4096), { headers: { 'content-type': 'application/octet-stream' } });
      return new Response('?', { status: 404 });
    } };`,
  );
  const call = (path: string, accept?: string) =>
    h.server.request(`http://${app.host}${path}`, {
      headers: accept ? { 'accept-encoding': accept } : {},
    });
  const br = await call('/big', 'gzip, br');
  assert.is(br.status, 200);
  assert.is(br.headers.get('content-encoding'), 'br');
  assert.is(br.headers.get('vary'), 'origin, accept-encoding');
  assert.is(br.headers.get('etag'), 'W/"v1"', "the app's strong ETag described other bytes");
  assert.is(zlib.brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString(), big);
  const gz = await call('/big', 'gzip');
  assert.is(gz.headers.get('content-encoding'), 'gzip');
  assert.is(zlib.gunzipSync(Buffer.from(await gz.arrayBuffer())).toString(), big);
  const none = await call('/big');
  assert.is(none.headers.get('content-encoding'), null);
  assert.is(none.headers.get('vary'), 'origin, accept-encoding');
  assert.is(await none.text(), big);
  for (const path of ['/small', '/own', '/no-transform', '/binary']) {
    const r = await call(path, 'br, gzip');
    assert.is(r.headers.get('content-encoding'), path === '/own' ? 'identity' : null, path);
    assert.ok((await r.arrayBuffer()).byteLength > 0, path);
  }
});

test.after(() => h.close());
test.run();
