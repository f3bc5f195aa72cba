/**
 * Request headers over real sockets. On Node the app origin reads the headers Node's parser made
 * (http/parsed-headers.ts) instead of the Request's; the in-process tests go through the Request.
 * Over the wire, with header lines repeated as clients may send them, a static hit (from disk, then
 * from memory) negotiates its encoding, answers 304 per variant, echoes or replaces the request id
 * and feeds analytics its referrer and bot verdict exactly as the Request path does.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { setPlan } from '../../src/plans/operator.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_PLANS_FILE: '' });
const u = await newUser(h);
await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' }); // analytics are a Starter feature
const page = `<!doctype html><title>Wire</title>${'<p>Repeated words compress well. '.repeat(500)}</p>`;
const published = await h.call('PUT', '/v0/apps', {
  key: u.api_key,
  body: site({ files: [file('public/index.html', page)] }),
});
assert.is(published.status, 200, published.text);
const appId = published.body.app_id as string;
const ECHO = `export default { fetch(req) { return Response.json([...req.headers]); } };`;
const echo = await h.call('PUT', '/v0/apps', {
  key: u.api_key,
  body: site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/robots.txt', 'x'), file('server.js', ECHO, 'text/javascript')],
  }),
});
assert.is(echo.status, 200, echo.text);
const echoHost = `${echo.body.app_id as string}.apps.localhost`;
const wire = await listen(h.server);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** GET / with header lines exactly as given (a name may repeat); the body as bytes. */
function get(
  lines: [string, string][],
  host = `${appId}.apps.localhost`,
  path = '/',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = [['host', host], ...lines].flat();
    const req = http.request(
      { host: '127.0.0.1', port: wire.port, path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('Accept-Encoding over two lines counts as one list; If-None-Match gives 304 per variant', async () => {
  // twice: the first hit reads the bytes in, the second is answered from memory on the fast path
  for (let i = 0; i < 2; i++) {
    const br = await get([
      ['accept-encoding', 'gzip;q=0.5'],
      ['accept-encoding', 'br'],
    ]);
    assert.is(br.status, 200);
    assert.is(br.headers['content-encoding'], 'br');
    assert.is(zlib.brotliDecompressSync(br.body).toString(), page);
    const gz = await get([
      ['accept-encoding', 'br;q=0'],
      ['accept-encoding', 'gzip'],
    ]);
    assert.is(gz.headers['content-encoding'], 'gzip');
    assert.is(zlib.gunzipSync(gz.body).toString(), page);
    const none = await get([
      ['accept-encoding', 'identity;q=0'],
      ['accept-encoding', 'deflate'],
    ]);
    assert.is(
      none.status,
      406,
      'nothing acceptable: identity refused on one line, deflate not there on the other',
    );

    const again = await get([
      ['accept-encoding', 'br'],
      ['if-none-match', 'W/"other"'],
      ['if-none-match', br.headers.etag!],
    ]);
    assert.is(again.status, 304, 'the second If-None-Match line names the br variant');
    assert.is(again.headers.etag, br.headers.etag);
    assert.is(again.headers.vary, 'accept-encoding');
    const other = await get([
      ['accept-encoding', 'gzip'],
      ['if-none-match', br.headers.etag!],
    ]);
    assert.is(other.status, 200, "the br variant's tag does not match the gzip one");
    assert.is(other.headers['content-encoding'], 'gzip');
  }
});

test('a safe X-Request-Id comes back; an unsafe one, or two lines of it, gets a fresh id', async () => {
  assert.is((await get([['x-request-id', 'edge-7f3a']])).headers['x-request-id'], 'edge-7f3a');
  for (const lines of [
    [['x-request-id', 'has space']],
    [
      ['x-request-id', 'one'],
      ['x-request-id', 'two'],
    ],
  ] as [string, string][][]) {
    const id = (await get(lines)).headers['x-request-id'] as string;
    assert.match(id, /^[0-9a-f]{16}-[0-9a-z]+$/, `${JSON.stringify(lines)} → ${id}`);
  }
});

test('analytics get the referrer and the bot verdict from the wire headers', async () => {
  const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';
  await h.server.runtime.analytics.flush();
  const before = await h.answer('GET /v0/apps/{app_id}/analytics', {
    key: u.api_key,
    params: { app_id: appId },
  });
  assert.is(before.status, 200, before.text);
  for (let i = 0; i < 3; i++)
    await get([
      ['user-agent', firefox],
      ['referer', 'https://Blog.Example/post/1'],
    ]);
  await get([['user-agent', googlebot]]);
  await h.server.runtime.analytics.flush();
  const after = await h.answer('GET /v0/apps/{app_id}/analytics', {
    key: u.api_key,
    params: { app_id: appId },
  });
  assert.is(after.body!.totals.requests - before.body!.totals.requests, 3, 'people');
  assert.is(
    after.body!.totals.bot_requests - before.body!.totals.bot_requests,
    1,
    'the crawler, counted apart',
  );
  assert.equal(
    after.body!.referrers.find((r) => r.domain === 'blog.example'),
    { domain: 'blog.example', requests: 3 },
  );
});

test('server code is handed the same headers over the wire as through a Request: repeated lines joined, private ones dropped', async () => {
  const lines: [string, string][] = [
    ['accept', 'text/html'],
    ['accept', 'application/json;q=0.9'],
    ['x-custom', 'one'],
    ['X-Custom', 'two'],
    ['Accept-Language', 'en-GB'],
    ['cookie', 'session=abc'],
    ['authorization', 'Bearer nope'],
    ['x-forwarded-for', '127.0.0.9'],
    ['x-platform-account', 'acct'],
    ['proxy-thing', 'x'],
    ['x-request-id', 'edge-1'],
    ['user-agent', 'wire-test'],
  ];
  const overWire = await get(lines, echoHost, '/headers');
  assert.is(overWire.status, 200, overWire.body.toString());
  const seen = JSON.parse(overWire.body.toString()) as [string, string][];
  assert.equal(seen, [
    ['accept', 'text/html, application/json;q=0.9'],
    ['accept-language', 'en-GB'],
    ['authorization', 'Bearer nope'],
    ['host', echoHost],
    ['user-agent', 'wire-test'],
    ['x-custom', 'one, two'],
  ]);
  // the same request through a Request object (in-process, as on Deno): the very same list
  const joined: Record<string, string> = { host: echoHost }; // a real request always has one; a Request made here does not
  for (const [n, v] of lines)
    joined[n.toLowerCase()] = joined[n.toLowerCase()] ? `${joined[n.toLowerCase()]}, ${v}` : v;
  const inProcess = await h.server.request(`http://${echoHost}/headers`, { headers: joined });
  assert.equal(await inProcess.json(), seen);
});

test.after(async () => {
  agent.destroy();
  await wire.close();
  await h.close();
});

test.run();
