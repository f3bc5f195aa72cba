import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, listen, newUser, wireRequest } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;

const files = [
  file('public/index.html', '<h1>home</h1>'),
  file('public/about/index.html', '<h1>about</h1>'),
  file('public/css/site.css', 'body{}', 'text/css'),
  file('public/data.json', '{"a":1}', 'application/json'),
  file('public/404.html', '<h1>missing</h1>'),
  file('public/with space.txt', 'spaced', 'text/plain'),
  file('public/ünï.txt', 'unicode', 'text/plain; charset=utf-8'),
  file('secret.txt', 'outside the static root', 'text/plain'),
];
const published = (await h.call('PUT', '/v0/apps', { key, body: site({ files }) })).body;
const host = `${published.app_id}.apps.localhost:8787`;
const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  h.call(method, path, { host, headers });

test('serves static files with their content type, a strong ETag, Cache-Control and nosniff', async () => {
  const r = await get('/css/site.css');
  assert.is(r.status, 200);
  assert.is(r.text, 'body{}');
  assert.is(r.headers.get('content-type'), 'text/css');
  // Strong (no W/) and the SHA-256 of the bytes served, so any edit to the file changes it.
  assert.is(
    r.headers.get('etag'),
    `"${createHash('sha256').update('body{}').digest('base64url')}"`,
  );
  assert.is(r.headers.get('cache-control'), 'no-cache');
  assert.is(r.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(r.headers.get('x-request-id'));
  const json = await get('/data.json');
  assert.is(json.headers.get('content-type'), 'application/json');
});

test('over real HTTP, a static hit carries Content-Length and the same headers twice in a row (memoised path)', async () => {
  const live = await listen(h.server);
  try {
    for (let i = 0; i < 2; i++) {
      const r = await wireRequest(live.port, host, '/css/site.css');
      assert.is(r.status, 200);
      assert.is(r.body, 'body{}');
      assert.is(r.headers['content-length'], '6');
      assert.is(r.headers['content-type'], 'text/css');
      assert.is(r.headers['x-content-type-options'], 'nosniff');
      assert.match(String(r.headers['x-request-id']), /^[\w-]+$/);
    }
    const head = await wireRequest(live.port, host, '/css/site.css', { method: 'HEAD' });
    assert.is(head.headers['content-length'], '6');
    assert.is(head.body, '');
    const ids = new Set(
      await Promise.all(
        [1, 2, 3].map(
          async () => (await wireRequest(live.port, host, '/')).headers['x-request-id'],
        ),
      ),
    );
    assert.is(ids.size, 3, 'every response gets its own request id');
  } finally {
    await live.close();
  }
});

test('root and directory index.html; /dir redirects to /dir/ keeping the query', async () => {
  const root = await get('/');
  assert.is(root.text, '<h1>home</h1>');
  const dir = await get('/about/');
  assert.is(dir.text, '<h1>about</h1>');
  const noSlash = await get('/about?x=1');
  assert.is(noSlash.status, 301);
  assert.is(noSlash.headers.get('location'), '/about/?x=1');
  const explicit = await get('/about/index.html');
  assert.is(explicit.status, 200);
});

test('If-None-Match gives 304; HEAD has headers and no body; query strings do not affect lookup', async () => {
  const first = await get('/css/site.css');
  const etag = first.headers.get('etag')!;
  const again = await get('/css/site.css', { 'if-none-match': etag });
  assert.is(again.status, 304);
  assert.is(again.text, '');
  assert.is(again.headers.get('etag'), etag);
  assert.is((await get('/css/site.css', { 'if-none-match': `W/${etag}, "other"` })).status, 304);
  assert.is((await get('/css/site.css', { 'if-none-match': '"other"' })).status, 200);
  const head = await get('/css/site.css', {}, 'HEAD');
  assert.is(head.status, 200);
  assert.is(head.text, '');
  assert.is(head.headers.get('content-length'), '6');
  assert.is(head.headers.get('etag'), etag);
  const q = await get('/css/site.css?v=123&x');
  assert.is(q.text, 'body{}');
});

test('percent-encoded names resolve; traversal and encoded separators never escape the release', async () => {
  assert.is((await get('/with%20space.txt')).text, 'spaced');
  assert.is((await get(`/${encodeURIComponent('ünï.txt')}`)).text, 'unicode');
  for (const path of [
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/css/..%2f..%2fsecret.txt',
    '/%2E%2E%2Fsecret.txt',
    '/css%2fsite.css',
    '/css%5csite.css',
    '/%00',
    '/%zz',
    '/css//site.css',
    '/..%5csecret.txt',
    '/%2e%2e%2f%2e%2e%2fsecret.txt',
  ]) {
    const r = await get(path);
    assert.is(r.status, 404, path);
    assert.is.not(r.text, 'outside the static root', path);
    assert.is.not(r.text, 'body{}', `${path} must not resolve through an encoded separator`);
  }
  // Dot segments in the raw URL are removed by URL parsing itself: the same resource, not an escape.
  assert.is((await get('/./css/site.css')).text, 'body{}');
  const outside = await get('/secret.txt');
  assert.is(outside.status, 404, 'files outside static_root are not served');
});

test('fallback 404 serves 404.html with status 404; reserved /_platform paths are 404', async () => {
  const r = await get('/nope');
  assert.is(r.status, 404);
  assert.is(r.text, '<h1>missing</h1>');
  const reserved = await get('/_platform/anything');
  assert.is(reserved.status, 404);
  assert.is(reserved.body.error.code, 'not_found');
  const post = await get('/index.html', {}, 'POST');
  assert.is(post.status, 405);
  assert.is(post.headers.get('allow'), 'GET, HEAD');
});

test('fallback index.html serves the root index for unknown paths (single-page apps)', async () => {
  const spa = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: site({ runtime: { static_root: 'public', fallback: 'index.html' } }),
    })
  ).body;
  const r = await h.call('GET', '/some/client/route', { host: `${spa.app_id}.apps.localhost` });
  assert.is(r.status, 200);
  assert.is(r.text, '<h1>Hello</h1>');
  const plain = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;
  const none = await h.call('GET', '/nope', { host: `${plain.app_id}.apps.localhost` });
  assert.is(none.status, 404);
  assert.is(none.body.error.code, 'not_found');
});

test('unknown and unpublished apps answer 404; a new release and a rollback switch what is served', async () => {
  assert.is((await h.call('GET', '/', { host: 'nosuchapp0000000.apps.localhost' })).status, 404);
  assert.is((await h.call('GET', '/', { host: 'a.b.apps.localhost' })).status, 404);
  const a = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: site({ files: [file('public/index.html', 'v1')] }),
    })
  ).body;
  const appHost = `${a.app_id}.apps.localhost`;
  assert.is((await h.call('GET', '/', { host: appHost })).text, 'v1');
  const b = (
    await h.call('PUT', `/v0/apps/${a.app_id}`, {
      key,
      body: site({ files: [file('public/index.html', 'v2')] }),
    })
  ).body;
  assert.is((await h.call('GET', '/', { host: appHost })).text, 'v2');
  await h.call('POST', `/v0/apps/${a.app_id}/rollback`, {
    key,
    body: { release_id: a.release_id },
  });
  assert.is((await h.call('GET', '/', { host: appHost })).text, 'v1');
  void b;
  // A stored (pending) release does not change what is served.
  await h.call('PUT', `/v0/apps/${a.app_id}`, {
    key,
    body: site({
      files: [file('public/index.html', 'v3')],
      resources: { secrets: { required: ['NOPE'] } },
    }),
  });
  assert.is((await h.call('GET', '/', { host: appHost })).text, 'v1');
  await h.call('DELETE', `/v0/apps/${a.app_id}`, { key });
  const gone = await h.call('GET', '/', { host: appHost });
  assert.is(gone.status, 404);
});

test('a static hit needs no database round trip (served from memory)', async () => {
  await get('/css/site.css'); // warm
  const before = h.deps.pool.totalCount;
  let queries = 0;
  const original = h.deps.pool.query.bind(h.deps.pool);
  (h.deps.pool as any).query = (...args: any[]) => {
    queries++;
    return (original as any)(...args);
  };
  const connect = h.deps.pool.connect.bind(h.deps.pool);
  (h.deps.pool as any).connect = (...args: any[]) => {
    queries++;
    return (connect as any)(...args);
  };
  for (let i = 0; i < 20; i++) assert.is((await get('/css/site.css')).status, 200);
  (h.deps.pool as any).query = original;
  (h.deps.pool as any).connect = connect;
  assert.is(queries, 0);
  void before;
});

test.after(() => h.close());
test.run();
