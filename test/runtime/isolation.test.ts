/**
 * One app cannot hurt another, over real HTTP with two apps on one server: cookies stay on their own
 * host, a hostile status or header block never reaches the wire, a webhook flood is one summary
 * event, slow clients are cut off, and a sibling app's page cannot post with the visitor's cookies.
 */
import http from 'node:http';
import net from 'node:net';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { onDeno } from '../../src/lib/on-deno.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const after = (ms: number) => new Promise((r) => setTimeout(r, ms));

const h = await createHarness({
  PLATFORM_HEADERS_TIMEOUT_SECONDS: '1',
  PLATFORM_REQUEST_TIMEOUT_SECONDS: '2',
});
const wire = await listen(h.server, 0, h.config);
const u = await newUser(h);

const HOSTILE = `export default {
  async fetch(req) {
    const p = new URL(req.url).pathname;
    if (p === '/cookies') {
      const headers = new Headers();
      headers.append('set-cookie', 'planted=1; Domain=apps.localhost; Path=/');
      headers.append('set-cookie', 'wide=1; Path=/; domain=localhost; HttpOnly');
      headers.append('set-cookie', '=platform_session=ATTACKER; Domain=apps.localhost; Path=/');
      headers.append('set-cookie', '__Host-platform_app_session=forged; Path=/; Secure');
      headers.append('set-cookie', 'mine=1; Path=/; SameSite=Lax');
      return new Response('cookies', { headers });
    }
    if (p === '/status') {
      const s = new URL(req.url).searchParams.get('s');
      class R extends Response { get status() { return /^\\d+$/.test(s) ? Number(s) : s; } }
      return new R('odd');
    }
    if (p === '/many-headers') {
      const headers = new Headers();
      for (let i = 0; i < 150; i++) headers.set('x-h' + i, 'v');
      return new Response('many', { headers });
    }
    if (p === '/big-header') return new Response('big', { headers: { 'x-big': 'a'.repeat(40 * 1024) } });
    return new Response('hostile home');
  },
};`;

async function publish(
  source: string,
  resources: Record<string, unknown> = {},
  secrets: Record<string, string> = {},
) {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
    resources,
  });
  let r = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  if (Object.keys(secrets).length) {
    for (const [name, value] of Object.entries(secrets))
      await h.call('PUT', `/v0/apps/${r.body.app_id}/secrets/${name}`, {
        key: u.api_key,
        body: { value },
      });
    r = await h.call('PUT', `/v0/apps/${r.body.app_id}`, { key: u.api_key, body });
  }
  assert.is(r.body.activation?.status, 'live', r.text);
  return { appId: r.body.app_id as string, host: `${r.body.app_id}.apps.localhost` };
}

const hostile = await publish(
  HOSTILE,
  {
    webhooks: { hook: { provider: 'code_host', secret: 'HOOK_SECRET', deliver_to: 'server' } },
    secrets: { required: ['HOOK_SECRET'] },
  },
  { HOOK_SECRET: 'hook-secret-value' },
);
const victim = await publish(
  `export default { async fetch(req) { return new Response('victim ok'); } };`,
  {
    auth: { mode: 'app_users', public_signup: true },
    data: {
      collections: {
        notes: {
          access: { read: 'authenticated', write: 'authenticated' },
          fields: { title: 'string' },
        },
      },
    },
  },
);

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };
/**
 * A fresh connection unless `agent` says otherwise. Node's keep-alive agent (the default one since
 * Node 19) leaves a write error unhandled when the server answers before reading the body and then
 * closes, as the platform may when it refuses a large body: the test process would crash on EPIPE.
 */
function send(
  host: string,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    agent?: http.Agent;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: wire.port,
        path,
        method: options.method ?? 'GET',
        headers: { host, ...options.headers },
        agent: options.agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

test('cookies an app sets stay on its own host: no Domain, no nameless cookie, nothing in the platform namespace', async () => {
  const r = await send(hostile.host, '/cookies');
  assert.is(r.status, 200);
  assert.equal(r.headers['set-cookie'], [
    'planted=1; Path=/',
    'wide=1; Path=/; HttpOnly',
    'mine=1; Path=/; SameSite=Lax',
  ]);
  // the app-user session cookie is __Host- prefixed: no sibling app can set or shadow it
  const signup = await send(victim.host, '/_platform/auth/signup', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'v@example.com', password: 'a long password' }),
  });
  assert.is(signup.status, 201, signup.body);
  assert.match(
    signup.headers['set-cookie']![0]!,
    /^__Host-platform_app_session=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax/,
  );
});

test('a status outside 200-599 (or not a number) is a runtime_error, and the connection stays in step for the next app', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const status of [
      '101',
      '100',
      '103',
      '199',
      '600',
      '999',
      encodeURIComponent('200\r\nX-Inj: 1'),
    ]) {
      const r = await send(hostile.host, `/status?s=${status}`, { agent });
      assert.is(r.status, 500, `status ${status}`);
      assert.match(r.body, '"runtime_error"');
      assert.is(r.headers['x-inj'], undefined);
      const next = await send(victim.host, '/hello', { agent });
      assert.is(next.status, 200, `after ${status}, the next request on the connection`);
      assert.is(next.body, 'victim ok');
    }
  } finally {
    agent.destroy();
  }
  const events = await h.call(
    'GET',
    `/v0/apps/${hostile.appId}/events?type=runtime.request_error`,
    { key: u.api_key },
  );
  assert.ok(
    events.body.events.some(
      (e: { metadata: { kind: string } }) => e.metadata.kind === 'bad_status',
    ),
  );
});

test('response headers are capped in count and size', async () => {
  for (const path of ['/many-headers', '/big-header']) {
    const r = await send(hostile.host, path);
    assert.is(r.status, 500, path);
    assert.match(r.body, '"runtime_error"');
  }
  const events = await h.call(
    'GET',
    `/v0/apps/${hostile.appId}/events?type=runtime.request_error`,
    { key: u.api_key },
  );
  assert.is(
    events.body.events.filter(
      (e: { metadata: { kind: string } }) => e.metadata.kind === 'headers_too_large',
    ).length,
    2,
  );
});

test('a flood of webhook deliveries is refused with 429 and logged as one summary event, not one each', async () => {
  const answers = await Promise.all(
    Array.from({ length: 400 }, () =>
      send(hostile.host, '/_platform/webhooks/hook', { method: 'POST', body: 'junk' }),
    ),
  );
  const throttled = answers.filter((a) => a.status === 429);
  assert.ok(throttled.length > 100, `${throttled.length} refused with 429`);
  assert.ok(throttled.every((a) => Number(a.headers['retry-after']) >= 1));
  const { rows } = await sql<{
    reason: string;
    n: number;
  }>`select metadata->>'reason' as reason, count(*)::int as n from app_events where app_id = ${hostile.appId} and type = 'webhook.rejected' group by 1`.execute(
    h.deps.db,
  );
  const byReason = Object.fromEntries(rows.map((r) => [r.reason, r.n]));
  // one summary a minute: a flood that crosses a minute's end has one in each (the counters' windows)
  const windows = await sql<{
    hits: number;
  }>`select hits from abuse_counters where key = ${`webhook-throttled:app:${hostile.appId}`}`.execute(
    h.deps.db,
  );
  assert.ok(windows.rows.length >= 1 && windows.rows.length <= 2, `${windows.rows.length} windows`);
  assert.is(
    windows.rows.reduce((n, w) => n + w.hits, 0),
    throttled.length,
    'every 429 is counted in a summary window',
  );
  assert.is(byReason.rate_limited, windows.rows.length, JSON.stringify(byReason));
  assert.is(
    byReason.missing,
    400 - throttled.length,
    'each delivery under the limit is still its own event',
  );
});

test('a client that trickles its request is cut off by the request timeout', async () => {
  const socket = net.connect(wire.port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  socket.write(
    `POST / HTTP/1.1\r\nHost: ${victim.host}\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nsome`,
  );
  let answer = '';
  const outcome = await new Promise<'closed' | 'answered' | 'held'>((resolve) => {
    const t = setTimeout(() => resolve('held'), 10_000);
    socket.on('data', (d) => {
      answer += d;
      // Deno 2.9 answers at the deadline but keeps a socket whose body read is pending for about
      // 30 s more, out of the server's reach (docs/decisions/deno.md); Node closes it at once.
      if (onDeno && answer.includes('\r\n\r\n')) clearTimeout(t), resolve('answered');
    });
    socket.on('close', () => (clearTimeout(t), resolve('closed')));
    socket.on('error', () => {});
  });
  socket.destroy();
  assert.is.not(outcome, 'held', 'answered within 10 s');
  assert.match(answer, /^HTTP\/1\.1 408 /, 'the answer is a 408');
  if (!onDeno) assert.is(outcome, 'closed', 'the connection was closed within 10 s');
});

test("a sibling app's page cannot post to another app with the visitor's cookies", async () => {
  const signup = await send(victim.host, '/_platform/auth/signup', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'sib@example.com', password: 'a long password' }),
  });
  const cookie = signup.headers['set-cookie']![0]!.split(';')[0]!;
  const own = `http://${victim.host}`; // the Host this client sends, as a browser's Origin matches its Host
  const post = (headers: Record<string, string>, body = JSON.stringify({ title: 'x' })) =>
    send(victim.host, '/_platform/data/notes', {
      method: 'POST',
      headers: { cookie, ...headers },
      body,
    });
  // a form or no-cors fetch from another app: cookies, no Origin (or the sibling's), text/plain
  assert.is((await post({ 'content-type': 'text/plain' })).status, 403, 'cookie, no Origin');
  assert.is(
    (await post({ 'content-type': 'application/json' })).status,
    403,
    'cookie and JSON, still no Origin',
  );
  assert.is(
    (await post({ 'content-type': 'application/json', origin: `http://${hostile.host}` })).status,
    403,
    "the sibling's Origin",
  );
  assert.is(
    (await post({ 'content-type': 'application/json', 'sec-fetch-site': 'same-site' })).status,
    403,
    'same-site is not same-origin',
  );
  const plain = await post({ 'content-type': 'text/plain', origin: own });
  assert.is(plain.status, 400, "the app's own page must send JSON");
  assert.match(plain.body, 'unsupported_media_type');
  assert.is(
    (await post({ 'content-type': 'application/json', origin: own })).status,
    201,
    "the app's own page",
  );
  assert.is(
    (await post({ 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' })).status,
    201,
    'Fetch Metadata says same-origin',
  );
  const logout = await send(victim.host, '/_platform/auth/logout', {
    method: 'POST',
    headers: { cookie },
  });
  assert.is(logout.status, 403, 'no forced sign-out from a sibling');
  const login = await send(victim.host, '/_platform/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ email: 'sib@example.com', password: 'a long password' }),
  });
  assert.is(login.status, 400, 'login takes JSON only');
});

test('login limits are shared by every node and survive a flood of junk keys (nothing is forgotten at once)', async () => {
  const nodeB = await createHarness(); // a second API node on the same database
  try {
    const creds = (email: string, password: string) => ({ email, password });
    const login = (node: typeof h, email: string, password: string, client: string) =>
      node.call('POST', '/_platform/auth/login', {
        host: victim.host,
        body: creds(email, password),
        client,
      });
    await h.call('POST', '/_platform/auth/signup', {
      host: victim.host,
      body: creds('limited@example.com', 'the right password'),
    });
    for (let i = 0; i < 10; i++)
      assert.is(
        (await login(h, 'limited@example.com', `wrong guess ${i}`, '10.9.0.1')).status,
        401,
      );
    // junk from elsewhere, through the other node: many distinct keys
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        login(nodeB, `junk${i}@example.com`, 'whatever password', `10.9.1.${i % 250}`),
      ),
    );
    const next = await login(nodeB, 'limited@example.com', 'the right password', '10.9.0.2');
    assert.is(next.status, 429, 'the e-mail is still throttled, on the other node too');
    assert.ok(Number(next.headers.get('retry-after')) > 0);
  } finally {
    await nodeB.close();
  }
});

test('request bodies held at once are bounded per app: past its share a visitor gets 503 and Retry-After before the body is read; another app is served', async () => {
  // the handler holds its call (and so its body's room) for a while; it does not copy the body again
  const HOLD = `export default { async fetch(req) {
    if (new URL(req.url).pathname === '/size') return new Response('got ' + (await req.arrayBuffer()).byteLength);
    await new Promise((r) => setTimeout(r, 1500));
    return new Response('held');
  } };`;
  const [a, b] = [await publish(HOLD), await publish(HOLD)];
  const eightMiB = 'x'.repeat(8 * 1024 * 1024 - 1024);
  // over the wire, as browsers send them: with Content-Length
  const post = (host: string, path: string, body: string) =>
    send(host, path, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
  // five 8 MiB bodies at once: an app's share is 32 MiB; then, while four are held, one more sent chunked
  // (no declared length: it takes room as it arrives) to the same app, and one to another app
  const chunked = (host: string) =>
    send(host, '/size', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      body: 'x'.repeat(1024 * 1024),
    });
  const [many, late, other] = await Promise.all([
    Promise.all(Array.from({ length: 5 }, () => post(a.host, '/hold', eightMiB))),
    after(300).then(() => chunked(a.host)),
    after(300).then(() => post(b.host, '/size', 'x'.repeat(1024 * 1024))),
  ]);
  assert.is(late.status, 503, 'a chunked body past the room left is refused as it arrives');
  assert.equal(
    many.filter((r) => r.status === 200).map((r) => r.body),
    Array(4).fill('held'),
  );
  const refused = many.filter((r) => r.status === 503);
  assert.is(refused.length, 1);
  assert.is(JSON.parse(refused[0]!.body).error.code, 'service_unavailable');
  assert.is(refused[0]!.headers['retry-after'], '1');
  assert.is(other.body, `got ${1024 * 1024}`, 'another app was served meanwhile');
  assert.is(
    (await post(a.host, '/size', eightMiB)).body,
    `got ${eightMiB.length}`,
    'the room is given back when the calls have their bodies',
  );
  assert.is(
    (await chunked(a.host)).body,
    `got ${1024 * 1024}`,
    'a chunked body that fits is taken',
  );
});

test.after(async () => {
  await wire.close();
  await h.close();
});
test.run();
