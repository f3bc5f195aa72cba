/**
 * The app origin's shared cache: an answer the app marks cacheable is served again without running
 * the app (Age, Cache-Status), per Vary, never when it sets a cookie or answers a credentialed
 * request without `public`, refreshed in the background when stale-while-revalidate allows,
 * bypassed by a client's no-cache, emptied by a publish, and bounded per app.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp, waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness } from '../_lib/harness.ts';
import { newUser } from '../_lib/harness.ts';

const h = await createHarness({
  PLATFORM_HTTP_CACHE_APP_MB: '1',
  PLATFORM_HTTP_CACHE_ACCOUNT_MB: '2',
});
const owner = await newUser(h);

// every answer says how many times this instance's handler ran, so a cached answer shows the old count
const SOURCE = (version: string) => `let runs = 0;
export default { fetch(req) {
  runs++;
  const u = new URL(req.url);
  const cc = u.searchParams.get('cc');
  const headers = { 'content-type': 'text/plain' };
  if (cc) headers['cache-control'] = cc;
  if (u.searchParams.get('vary')) headers.vary = u.searchParams.get('vary');
  if (u.searchParams.get('cookie')) headers['set-cookie'] = 'a=1';
  if (u.searchParams.get('etag')) headers.etag = '"v1"';
  const pad = 'x'.repeat(Number(u.searchParams.get('pad') ?? 0));
  return new Response('${version} run ' + runs + ' lang ' + req.headers.get('accept-language') + pad, { headers });
} };`;

const app = await publishServerApp(h, owner.api_key, SOURCE('v1'));
const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  h.call(method, path, { host: app.host, headers });
const runOf = (text: string) => Number(/run (\d+)/.exec(text)?.[1]);

test('a cacheable answer is served again without running the app', async () => {
  const url = '/a?cc=public,%20s-maxage%3D60';
  const first = await get(url);
  assert.is(first.status, 200);
  assert.is(first.headers.get('cache-status'), 'platform; fwd=uri-miss; stored');
  const second = await waitFor(async () => {
    const r = await get(url);
    return r.headers.get('cache-status')?.includes('hit') ? r : undefined;
  }, 5_000);
  assert.is(second.text, first.text, 'the same answer, the app not run again');
  assert.match(second.headers.get('cache-status')!, /^platform; hit; ttl=\d+$/);
  assert.ok(Number(second.headers.get('age')) >= 0);
  assert.is(second.headers.get('content-type'), 'text/plain');
  assert.is.not(second.headers.get('x-request-id'), first.headers.get('x-request-id'));
  // HEAD from the GET's entry; If-None-Match against the stored ETag
  const head = await get(url, {}, 'HEAD');
  assert.match(head.headers.get('cache-status')!, /hit/);
  assert.is(head.text, '');
  const tagged = '/t?etag=1&cc=max-age%3D60';
  await get(tagged);
  const notModified = await waitFor(async () => {
    const r = await get(tagged, { 'if-none-match': '"v1"' });
    return r.status === 304 ? r : undefined;
  }, 5_000);
  assert.match(notModified.headers.get('cache-status')!, /hit/);
});

test('not stored: no freshness, private, no-store, a cookie set', async () => {
  for (const q of ['', '?cc=no-store', '?cc=private,max-age%3D60', '?cc=max-age%3D60&cookie=1']) {
    const a = await get(`/n${q}`);
    const b = await get(`/n${q}`);
    assert.is(runOf(b.text), runOf(a.text) + 1, `${q}: the app ran again`);
    assert.is(b.headers.get('cache-status'), 'platform; fwd=uri-miss', q);
  }
});

test('Vary keeps one answer per variant; a client no-cache runs the app', async () => {
  const url = '/v?cc=max-age%3D60&vary=accept-language';
  const en = await get(url, { 'accept-language': 'en' });
  const fr = await get(url, { 'accept-language': 'fr' });
  assert.match(fr.headers.get('cache-status')!, /fwd=vary-miss; stored/);
  await waitFor(async () => (await get(url, { 'accept-language': 'fr' })).text === fr.text, 5_000);
  assert.is((await get(url, { 'accept-language': 'en' })).text, en.text);
  const fresh = await get(url, { 'accept-language': 'en', 'cache-control': 'no-cache' });
  assert.is.not(fresh.text, en.text);
  assert.match(fresh.headers.get('cache-status')!, /fwd=request/);
});

test('credentials: stored only when the answer says public', async () => {
  const url = '/c?cc=s-maxage%3D60';
  const withAuth = await get(url, { authorization: 'Bearer abc' });
  assert.is(withAuth.headers.get('cache-status'), 'platform; fwd=uri-miss');
  const session = await get(url, { cookie: '__Host-platform_app_session=xyz' });
  assert.is(session.headers.get('cache-status'), 'platform; fwd=uri-miss');
  // cached for anonymous visitors, never handed to a signed-in one
  await get(url);
  await waitFor(async () => (await get(url)).headers.get('cache-status')?.includes('hit'), 5_000);
  const signedIn = await get(url, { authorization: 'Bearer abc' });
  assert.match(signedIn.headers.get('cache-status')!, /fwd=request/);
  const pub = '/c?cc=public,%20s-maxage%3D60';
  await get(pub);
  await waitFor(
    async () =>
      (await get(pub, { authorization: 'Bearer abc' })).headers
        .get('cache-status')
        ?.includes('hit'),
    5_000,
  );
});

test('stale-while-revalidate: the stale answer goes out once, a refresh replaces it', async () => {
  const url = '/s?cc=max-age%3D1,%20stale-while-revalidate%3D60';
  await get(url);
  // once stale, the old answer is served (ttl below zero) while the app runs again behind it
  const stale = await waitFor(async () => {
    const r = await get(url);
    const ttl = Number(/ttl=(-?\d+)/.exec(r.headers.get('cache-status') ?? '')?.[1]);
    return ttl < 0 ? r : undefined;
  }, 10_000);
  assert.ok(Number(stale.headers.get('age')) >= 1);
  await waitFor(async () => runOf((await get(url)).text) > runOf(stale.text), 10_000);
});

test('a publish empties the app’s entries', async () => {
  const url = '/p?cc=max-age%3D600';
  await get(url);
  await waitFor(async () => (await get(url)).headers.get('cache-status')?.includes('hit'), 5_000);
  const r = await h.call('PUT', `/v0/apps/${app.appId}`, {
    key: owner.api_key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', 'static'),
        file('server.js', SOURCE('v2'), 'text/javascript'),
      ],
    }),
  });
  assert.is(r.body.activation.status, 'live');
  const after = await get(url);
  assert.match(after.text, /^v2 /);
  assert.match(after.headers.get('cache-status')!, /fwd=uri-miss/);
});

test('an app keeps at most its share (PLATFORM_HTTP_CACHE_APP_MB)', async () => {
  // three answers of 400 KB: the third does not fit in a 1 MiB share
  for (const n of [1, 2, 3]) await get(`/big${n}?cc=max-age%3D600&pad=400000`);
  const kept = async (n: number) =>
    (await get(`/big${n}?cc=max-age%3D600&pad=400000`)).headers
      .get('cache-status')!
      .includes('hit');
  await waitFor(async () => (await kept(1)) && (await kept(2)), 5_000);
  assert.is(await kept(3), false);
  const stats = h.server.runtime.httpCache!.stats();
  assert.ok(stats.bytes <= 1024 * 1024 + 64 * 1024, `${stats.bytes} bytes held`);
});

test('an account keeps at most its share (PLATFORM_HTTP_CACHE_ACCOUNT_MB), other accounts keep theirs', async () => {
  // three apps of one account, two answers of 400 KB each: within each app's 1 MiB, past the account's 2 MiB
  const many = await newUser(h, 'many-apps');
  const apps: { appId: string; host: string }[] = [];
  for (let i = 0; i < 3; i++) apps.push(await publishServerApp(h, many.api_key, SOURCE(`m${i}`)));
  const big = (host: string, n: number) =>
    h.call('GET', `/big${n}?cc=max-age%3D600&pad=400000`, { host });
  const kept = async (host: string, n: number) =>
    (await big(host, n)).headers.get('cache-status')!.includes('hit');
  for (const a of apps) for (const n of [1, 2]) await big(a.host, n);
  const held = await Promise.all(apps.flatMap((a) => [1, 2].map((n) => kept(a.host, n))));
  assert.equal(held, [true, true, true, true, true, false], 'the sixth answer is past the share');
  // an app's answers emptied (it is unpublished) leave the account's share: room again
  const gone = await h.call('DELETE', `/v0/apps/${apps[0]!.appId}`, { key: many.api_key });
  assert.is(gone.status, 200, gone.text);
  await waitFor(async () => (await big(apps[2]!.host, 2)) && kept(apps[2]!.host, 2));
  // another account's app still stores its answers
  const other = await newUser(h, 'other-account');
  const theirs = await publishServerApp(h, other.api_key, SOURCE('o'));
  await big(theirs.host, 1);
  assert.ok(await kept(theirs.host, 1));
});

test('the Cache API of app code: caches.default and caches.open, as Workers code uses them', async () => {
  const cacheApp = await publishServerApp(
    h,
    owner.api_key,
    `let runs = 0;
export default { async fetch(req, env, ctx) {
  const u = new URL(req.url);
  const cache = u.searchParams.get('named') ? await caches.open('pages') : caches.default;
  const key = new Request('https://cache.internal' + u.pathname);
  if (u.searchParams.get('delete')) return Response.json({ deleted: await cache.delete(key) });
  if (u.searchParams.get('bad')) {
    try { await cache.put(new Request(key, { method: 'POST' }), new Response('x')); }
    catch (e) { return new Response(e.name + ': ' + e.message); }
  }
  const hit = await cache.match(key);
  if (hit) return new Response('cached: ' + (await hit.text()) + ' age ' + hit.headers.get('age'));
  runs++;
  // the copy kept says how long; the answer itself is not for the origin's cache
  const kept = new Response('run ' + runs, { headers: { 'cache-control': 'max-age=600' } });
  ctx.waitUntil(cache.put(key, kept));
  return new Response('run ' + runs);
} };`,
  );
  const call = (path: string) => h.call('GET', path, { host: cacheApp.host });
  assert.is((await call('/k')).text, 'run 1');
  const again = await waitFor(async () => {
    const r = await call('/k');
    return r.text.startsWith('cached') ? r : undefined;
  }, 5_000);
  assert.match(again.text, /^cached: run 1 age \d+$/);
  // a named cache is its own namespace
  assert.is((await call('/k?named=1')).text, 'run 2');
  await waitFor(async () => (await call('/k?named=1')).text.startsWith('cached: run 2'), 5_000);
  assert.equal((await call('/k?delete=1')).body, { deleted: true });
  assert.equal((await call('/k?delete=1')).body, { deleted: false });
  assert.is((await call('/k')).text, 'run 3');
  assert.is((await call('/k?bad=1')).text, 'TypeError: Cache.put: only GET requests can be cached');
});

test.after(() => h.close());
test.run();
