import { build } from 'esbuild';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import http from 'node:http';
import { createHarness, listen, newUser, wireRequest } from '../_lib/harness.ts';
import { publishServerApp } from '../_lib/apps.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const u = await newUser(h);
const key = u.api_key;

/** Publishes a server app; its host carries the port, as browsers send it. */
async function serverApp(
  source: string,
  extra: { files?: ReturnType<typeof file>[]; resources?: unknown } = {},
) {
  const app = await publishServerApp(h, key, source, { index: '<h1>static</h1>', ...extra });
  return { ...app, host: `${app.host}:8787` };
}

async function events(appId: string, type: string) {
  for (let i = 0; i < 20; i++) {
    const r = await h.call('GET', `/v0/apps/${appId}/events?type=${type}`, { key });
    if (r.body.events.length) return r.body.events;
    await new Promise((res) => setTimeout(res, 25));
  }
  return [];
}

const ECHO = `
import { greet } from './lib/greet.js';
export default {
  async fetch(request, ctx) {
    const url = new URL(request.url);
    const headers = {};
    for (const [k, v] of request.headers) headers[k] = v;
    const body = request.method === 'POST' ? await request.text() : null;
    return Response.json({ method: request.method, path: url.pathname, q: url.searchParams.get('q'), headers, body, app: ctx.app, greet: greet('x') });
  },
};`;

test('fetch runs for paths static routing did not answer, with the request and ctx.app', async () => {
  const a = await serverApp(ECHO, {
    files: [file('lib/greet.js', 'export const greet = (n) => `hi ${n}`;', 'text/javascript')],
  });
  const stat = await h.call('GET', '/', { host: a.host });
  assert.is(stat.text, '<h1>static</h1>', 'static wins over the server');
  const r = await h.call('GET', '/api/x?q=1', { host: a.host });
  if (r.status !== 200) console.log(JSON.stringify(await events(a.appId, 'runtime.request_error')));
  assert.is(r.status, 200, r.text);
  assert.is(r.body.method, 'GET');
  assert.is(r.body.path, '/api/x');
  assert.is(r.body.q, '1');
  assert.is(r.body.greet, 'hi x', 'relative imports of release files work');
  assert.equal(r.body.app, {
    app_id: a.appId,
    origin: `http://${a.appId}.apps.localhost:8787`,
    release_id: a.releaseId,
  });
  const post = await h.call('POST', '/api/echo', {
    host: a.host,
    rawBody: 'payload',
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(post.body.body, 'payload');
  assert.ok(r.headers.get('x-request-id'));
});

test('platform headers, cookies and credentials are removed before app code runs', async () => {
  const a = await serverApp(ECHO, {
    files: [file('lib/greet.js', 'export const greet = (n) => n;', 'text/javascript')],
  });
  const r = await h.call('GET', '/api', {
    host: a.host,
    headers: {
      cookie: 'session=abc; __Host-platform_session=xyz',
      authorization: `Bearer ${key}`,
      'x-platform-account-id': 'acct_1',
      'x-platform-internal': '1',
      'x-api-key': key,
      'x-forwarded-for': '10.0.0.1',
      'proxy-authorization': 'Basic x',
      accept: 'application/json',
      'x-custom': 'kept',
    },
  });
  const names = Object.keys(r.body.headers);
  for (const gone of [
    'cookie',
    'authorization',
    'x-platform-account-id',
    'x-platform-internal',
    'x-api-key',
    'x-forwarded-for',
    'proxy-authorization',
  ]) {
    assert.not.ok(names.includes(gone), gone);
  }
  assert.not.match(JSON.stringify(r.body), key);
  assert.is(r.body.headers.accept, 'application/json');
  assert.is(r.body.headers['x-custom'], 'kept');
});

test("an app's own Authorization and X-API-Key reach it; a platform key in them never does, however it is wrapped", async () => {
  const a = await serverApp(ECHO, {
    files: [file('lib/greet.js', 'export const greet = (n) => n;', 'text/javascript')],
  });
  const seen = async (headers: Record<string, string>) =>
    (await h.call('GET', '/api', { host: a.host, headers })).body.headers as Record<string, string>;
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl';
  assert.is((await seen({ authorization: `Bearer ${jwt}` })).authorization, `Bearer ${jwt}`);
  const basic = `Basic ${btoa('alice:wonderland')}`;
  assert.is((await seen({ authorization: basic })).authorization, basic);
  assert.is((await seen({ 'x-api-key': 'app-own-key-123' }))['x-api-key'], 'app-own-key-123');
  for (const wrapped of [
    `Bearer ${key}`,
    `bearer ${key}`,
    `Token ${key}`,
    `Basic ${btoa(`user:${key}`)}`,
    `Basic ${btoa(`${key}:`).replace(/=+$/, '')}`,
  ]) {
    const got = await seen({ authorization: wrapped, 'x-api-key': wrapped });
    assert.is(got.authorization, undefined, wrapped);
    assert.is(got['x-api-key'], undefined, wrapped);
  }
});

test("an app response: cookies stay separate lines, platform cookies and hop-by-hop headers are dropped, the request id is the platform's", async () => {
  const a = await serverApp(`export default { fetch() {
    const h = new Headers({ 'content-type': 'text/plain', 'x-request-id': 'forged', connection: 'close', 'x-platform-account': 'acct_x' });
    h.append('set-cookie', 'a=1; Path=/');
    h.append('set-cookie', 'platform_session=stolen; Path=/');
    h.append('set-cookie', 'b=2; Path=/');
    h.append('vary', 'accept');
    h.append('vary', 'origin');
    return new Response('ok', { status: 201, headers: h });
  } };`);
  const live = await listen(h.server);
  const agent = new http.Agent({ keepAlive: true }); // so a Connection: close could only come from the app
  try {
    const res = await wireRequest(live.port, a.host, '/x', { agent });
    assert.is(res.status, 201);
    assert.equal(res.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    assert.is(res.headers.vary, 'accept, origin');
    assert.is(res.headers['x-platform-account'], undefined);
    assert.is.not(res.headers.connection, 'close');
    assert.ok(res.headers['x-request-id'] && res.headers['x-request-id'] !== 'forged');
    // One cookie takes the plain-object path: still a single, intact line.
    const one = await serverApp(
      `export default { fetch() { return new Response('ok', { headers: { 'set-cookie': 'only=1; HttpOnly' } }); } };`,
    );
    const r1 = await wireRequest(live.port, one.host, '/x', { agent });
    assert.equal(r1.headers['set-cookie'], ['only=1; HttpOnly']);
    // Header names that are also names on Object.prototype are ordinary headers.
    const odd = await serverApp(`export default { fetch() {
      const h = new Headers({ constructor: 'c', 'x-n': '1' });
      h.append('__proto__', 'p');
      h.append('__proto__', 'q');
      return new Response('ok', { headers: h });
    } };`);
    const raw = await new Promise<string[]>((resolve, reject) => {
      http
        .get(
          { host: '127.0.0.1', port: live.port, path: '/x', headers: { host: odd.host }, agent },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.rawHeaders));
          },
        )
        .on('error', reject);
    });
    const sent = (name: string) => {
      const values: string[] = [];
      for (let i = 0; i < raw.length; i += 2)
        if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
      return values;
    };
    assert.equal(sent('constructor'), ['c']);
    assert.equal(sent('__proto__'), ['p, q']);
    assert.equal(sent('x-n'), ['1']);
  } finally {
    agent.destroy();
    await live.close();
  }
});

test('ctx.secrets.get/require and ctx.log: events with secret values and token-like values redacted', async () => {
  const a = await serverApp(`
    export default { fetch(req, ctx) {
      const k = ctx.secrets.get('API_KEY');
      const missing = ctx.secrets.get('NOPE');
      let required = 'none';
      try { ctx.secrets.require('NOPE'); } catch (e) { required = e.message; }
      ctx.log.info('using key ' + k, { key_used: k, password: 'hunter2', nested: { authorization: 'x', fine: 'visible' }, blob: 'abcdef0123456789abcdef0123456789abcdef' });
      console.warn('console goes to the log too', 42);
      // a name is the whole string (a C string ended at the NUL: this read API_KEY)
      const nul = ctx.secrets.get('API_KEY\\u0000x');
      return Response.json({ len: k.length, missing: missing === undefined, required, nul: nul === undefined });
    } };`);
  await h.call('PUT', `/v0/apps/${a.appId}/secrets/API_KEY`, {
    key,
    body: { value: 'sk_live_abcdefgh' },
  });
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { len: 16, missing: true, required: 'Secret NOPE is not set', nul: true });
  const info = await events(a.appId, 'runtime.log.info');
  assert.is(info.length, 1);
  assert.is(info[0].message, 'using key [redacted]');
  assert.equal(info[0].metadata, {
    key_used: '[redacted]',
    password: '[redacted]',
    nested: { authorization: '[redacted]', fine: 'visible' },
    blob: '[redacted]',
  });
  assert.is(info[0].severity, 'info');
  assert.is(info[0].release_id, a.releaseId);
  assert.ok(info[0].request_id);
  const warn = await events(a.appId, 'runtime.log.warn');
  assert.is(warn[0].message, 'console goes to the log too 42');
  const all = await h.call('GET', `/v0/apps/${a.appId}/events`, { key });
  assert.not.match(all.text, 'sk_live_abcdefgh');
  assert.not.match(all.text, 'hunter2');
});

test('a thrown exception or a 5xx gives the visitor runtime_error; the owner gets the detail', async () => {
  const a = await serverApp(`export default { fetch(req) {
    if (new URL(req.url).pathname === '/503') return new Response('internal db password is xyz', { status: 503 });
    if (new URL(req.url).pathname === '/streamed-503')
      return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('streamed db password is xyz')); c.close(); } }), { status: 503 });
    throw new Error('database exploded at row 42');
  } };`);
  const r = await h.call('GET', '/boom', { host: a.host });
  assert.is(r.status, 500);
  assert.equal(r.body, {
    error: { code: 'runtime_error', message: 'The app could not handle this request.' },
  });
  assert.not.match(r.text, 'exploded');
  const ev = await events(a.appId, 'runtime.request_error');
  assert.is(ev[0].severity, 'error');
  assert.is(ev[0].metadata.kind, 'exception');
  assert.match(ev[0].metadata.error, 'database exploded at row 42');
  assert.is(ev[0].metadata.path, '/boom');
  const five = await h.call('GET', '/503', { host: a.host });
  assert.is(five.status, 503);
  assert.is(five.body.error.code, 'runtime_error');
  assert.not.match(five.text, 'password');
  // the owner's event carries the app's own status and the first line of what it said
  const answered = (await events(a.appId, 'runtime.request_error')).find(
    (e: { metadata: { path: string } }) => e.metadata.path === '/503',
  );
  assert.is(answered?.metadata.kind, 'status_5xx');
  assert.is(answered?.metadata.status, 503);
  assert.is(answered?.metadata.error, 'internal db password is xyz');
  // the same rule when the app streams its 5xx
  const streamed = await h.call('GET', '/streamed-503', { host: a.host });
  assert.is(streamed.status, 503);
  assert.is(streamed.body?.error.code, 'runtime_error', streamed.text);
  assert.not.match(streamed.text, 'password');
  // and its event carries what the stream began with (a framework's error page is streamed)
  const streamedEvent = (await events(a.appId, 'runtime.request_error')).find(
    (e: { metadata: { path: string } }) => e.metadata.path === '/streamed-503',
  );
  assert.is(streamedEvent?.metadata.status, 503);
  assert.is(streamedEvent?.metadata.error, 'streamed db password is xyz');
});

test("a 5xx's first line reaches the owner's event without the app's secrets in it", async () => {
  const a = await serverApp(
    "export default { fetch(req, ctx) { return new Response('<h1>connecting to ' + ctx.secrets.get('DB_URL') + ' failed</h1>\\nmore detail', { status: 500, headers: { 'content-type': 'text/html' } }); } };",
  );
  await h.call('PUT', `/v0/apps/${a.appId}/secrets/DB_URL`, {
    key,
    body: { value: 'postgres://app:s3cr3t-pw@db.internal/app' },
  });
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 500);
  const [e] = await events(a.appId, 'runtime.request_error');
  assert.is(
    e.metadata.error,
    'connecting to [redacted] failed',
    'the first line of text, tags left out',
  );
  const all = await h.call('GET', `/v0/apps/${a.appId}/events`, { key });
  assert.not.match(all.text, 's3cr3t-pw');
});

test('only source from the release can be imported: no host modules, packages or globals', async () => {
  const probe = await serverApp(
    `export default { fetch() { return Response.json({ process: Object.keys(process).sort(), cwd: process.cwd(), hrtime: process.hrtime(process.hrtime()).length + typeof process.hrtime.bigint(), exit: (() => { try { process.exit(1); } catch (e) { return e.message; } })(), versions: typeof process.versions, require: typeof require, Deno: Object.keys(Deno).sort(), host: typeof __host, Bun: typeof Bun }); } };`,
  );
  const r = await h.call('GET', '/x', { host: probe.host });
  // process and Deno are the compatibility objects for configuration (env), entry (Deno.serve),
  // Deno KV, Node's listener methods and what bundled code reads of Workers' process (cwd, hrtime)
  assert.equal(r.body, {
    process: [
      'addListener',
      'argv',
      'argv0',
      'chdir',
      'cwd',
      'emit',
      'emitWarning',
      'env',
      'execArgv',
      'exit',
      'hrtime',
      'listenerCount',
      'listeners',
      'nextTick',
      'off',
      'on',
      'once',
      'platform',
      'prependListener',
      'prependOnceListener',
      'removeAllListeners',
      'removeListener',
      'uptime',
    ],
    cwd: '/',
    hrtime: '2bigint',
    exit: 'process.exit() is not available on this platform',
    versions: 'undefined',
    require: 'undefined',
    Deno: ['KvU64', 'env', 'openKv', 'serve'],
    host: 'undefined',
    Bun: 'undefined',
  });
  // A module importing anything but release files does not load, so publishing it never goes live.
  for (const spec of [
    'node:fs',
    'fs',
    'hono',
    '/etc/passwd',
    '../../outside.js',
    'https://example.com/x.js',
  ]) {
    const body = site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', 'x'),
        file(
          'server.js',
          `import x from '${spec}'; export default { fetch() { return new Response('loaded') } };`,
          'text/javascript',
        ),
      ],
    });
    const r = await h.call('PUT', `/v0/apps/${probe.appId}`, { key, body });
    assert.is(r.body.status, 'stored', spec);
    assert.is(r.body.activation.status, 'failed', spec);
    assert.match(r.body.activation.reasons[0], /Cannot (import|find module)/, spec);
    assert.is(
      (await h.call('GET', '/x', { host: probe.host })).status,
      200,
      `${spec}: the live release keeps serving`,
    );
  }
  const dyn = await serverApp(
    `export default { async fetch() { const m = await import('node:child_process'); return new Response(typeof m) } };`,
  );
  assert.is((await h.call('GET', '/x', { host: dyn.host })).status, 500);
});

test('a log line holding NUL or a lone surrogate is kept whole and recorded (Postgres stores neither: U+FFFD in their place)', async () => {
  const a = await serverApp(`export default { fetch(req, ctx) {
    ctx.log.info('before\\u0000after \\uD800', { k: 'v\\u0000w' });
    console.error('c\\u0000d');
    return new Response('ok');
  } };`);
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 200, r.text);
  const info = await events(a.appId, 'runtime.log.info');
  assert.is(info.length, 1, 'the event was recorded');
  // whole (not cut at the NUL, as a C string would be), each character Postgres cannot store as U+FFFD
  assert.is(info[0].message, 'before\uFFFDafter \uFFFD');
  assert.equal(info[0].metadata, { k: 'v\uFFFDw' });
  const err = await events(a.appId, 'runtime.log.error');
  assert.is(err.length, 1);
  assert.is(err[0].message, 'c\uFFFDd');
});

test('URL and URLSearchParams answer as Node does for a table of inputs (queries split in the sandbox or parsed by the host)', async () => {
  const urls: [string, string?][] = [
    ['http://a.apps.localhost/api/x?y=1'],
    ['../c?d=2#h', 'https://example.com/a/b'],
    ['https://user:pa%20ss@EXAMPLE.com:8443/p%61th/\u00fc?q=\u00fc#frag'],
    ['http://[::1]:80/'],
    ['file:///tmp/x'],
    ['http://a.b/\u0000x?\u0000=\u0001#\u0000'],
    ['HTTP://A.B:0080/./x/../y'],
    ['foo://a\u0001b/x\u0001?q\u0001#f\u0001'],
    ['http://u\u0001:p\u0001@a.b/'],
    ['\u0000http://a.b/x\uD800y'],
    ['\u0002x', 'http://a.b/'],
    ['foo://a\u0000b/'],
    ['not a url'],
    ['http://a b/'],
    ['?q', 'http://a.b/p'],
  ];
  const queries = [
    '',
    '?',
    '?a=1',
    'a=1&&b=2&',
    'a==b',
    'a',
    '=x',
    'a=1&a=2',
    'x=%20y',
    'x=a+b',
    'x=%zz',
    'x=%E2%82%AC',
    '\u00e9=\u00fc',
    'x=\uD800',
    '?a=1?b=2',
    'a=b=c',
    '&&',
    '??a=1',
    'a\u0000b=c',
    '\u0002=1',
    'x=%00&y=\uDC00',
  ];
  const PARTS = [
    'href',
    'origin',
    'protocol',
    'username',
    'password',
    'host',
    'hostname',
    'port',
    'pathname',
    'search',
    'hash',
  ] as const;
  const describe = (
    URLClass: typeof URL,
    Params: typeof URLSearchParams,
    PARTS: readonly string[],
    urls: [string, string?][],
    queries: string[],
  ) => ({
    urls: urls.map(([u, base]) => {
      try {
        const url = base === undefined ? new URLClass(u) : new URLClass(u, base);
        return [
          ...PARTS.map((p) => (url as unknown as Record<string, string>)[p]),
          [...url.searchParams],
          String(url),
        ];
      } catch (e) {
        return (e as Error).constructor.name;
      }
    }),
    queries: queries.map((q) => {
      const p = new Params(q);
      return [[...p], p.toString(), p.size];
    }),
  });
  const a = await serverApp(`const describe = ${describe.toString()};
    export default { fetch() { return Response.json(describe(URL, URLSearchParams, ${JSON.stringify(PARTS)}, ${JSON.stringify(urls)}, ${JSON.stringify(queries)})); } };`);
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 200, r.text);
  // what Node answers, through the same JSON (a lone surrogate arrives as U+FFFD either way)
  assert.equal(
    r.body,
    JSON.parse(JSON.stringify(describe(URL, URLSearchParams, PARTS, urls, queries))),
  );
});

test("Response.json answers as Node's does: its content type unless the init names one, the init's status and headers, a value JSON cannot hold refused", async () => {
  // one source for both sides (a TypeScript function's own text would carry the compiler's helpers)
  const DESCRIBE = `async (R, H) => {
    const show = async (r) => [r.status, r.statusText, r.headers.get('content-type'), r.headers.get('x-a'), await r.text()];
    const refused = (v) => { try { R.json(v); return 'accepted'; } catch (e) { return e.name; } };
    return [
      await show(R.json({ a: 1, b: [true, null] })),
      await show(R.json([1], { status: 201, statusText: 'Made', headers: { 'Content-Type': 'application/vnd.x+json', 'X-A': '1' } })),
      await show(R.json('text', { headers: new H({ 'x-a': '2' }) })),
      await show(R.json(null, { headers: [['x-a', '3'], ['x-a', '4']] })),
      [refused(undefined), refused(() => 1)],
    ];
  }`;
  const a = await serverApp(`const describe = ${DESCRIBE};
    export default { async fetch() { return Response.json(await describe(Response, Headers)); } };`);
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 200, r.text);
  // biome-ignore lint/security/noGlobalEval: the same describe function runs in Node to compare
  const describe = (0, eval)(DESCRIBE) as (
    r: typeof Response,
    h: typeof Headers,
  ) => Promise<unknown>;
  assert.equal(r.body, await describe(Response, Headers));
});

test('web platform inside: Headers, Request/Response bodies, URL, TextEncoder/Decoder, base64, crypto, timers', async () => {
  const a = await serverApp(`export default { async fetch(request) {
    const h = new Headers({ 'X-A': '1' }); h.append('x-a', '2'); h.set('Content-Type', 'text/x');
    const bytes = new TextEncoder().encode('héllo');
    const res = new Response(bytes, { status: 201, headers: { 'x-bin': '1' } });
    const back = new TextDecoder().decode(await res.arrayBuffer());
    const req = new Request('https://example.com/a?b=1', { method: 'POST', body: JSON.stringify({ z: 1 }) });
    const parsed = await req.json();
    const u = new URL('../c?d=2#h', 'https://example.com/a/b'); u.searchParams.append('e', 'f g');
    const sp = new URLSearchParams('a=1&a=2&b=%20x');
    const rnd = crypto.getRandomValues(new Uint8Array(8));
    let waited = 0; await new Promise((r) => setTimeout(() => { waited = 1; r(); }, 5));
    const ab = await new Response(new Uint8Array([1, 2, 3])).arrayBuffer();
    return Response.json({
      h: h.get('x-a'), ct: h.get('content-type'), back, parsed, href: u.href, all: sp.getAll('a'), b: sp.get('b'),
      rnd: rnd.length, uuid: /^[0-9a-f-]{36}$/.test(crypto.randomUUID()), b64: btoa('hi'), unb64: atob('aGk='), waited, ab: ab.byteLength,
      bad: (() => { try { new URL('not a url'); return 'parsed'; } catch (e) { return e.constructor.name; } })(),
      // Header rules hold on every call, not only the first (names are cached once validated).
      names: [1, 2].map(() => { try { new Headers({ 'bad name': '1' }); return 'accepted'; } catch (e) { return e.constructor.name; } }),
      mixed: [1, 2].map(() => new Headers({ 'X-Mixed-Case': 'm' }).get('x-MIXED-case')),
      trimmed: new Headers({ 'x-t': ' \\t v w \\t ' }).get('x-t'),
      crlf: [' a\\r\\nb', 'a\\nb', 'a\\u0000b'].map((v) => { try { new Headers().set('x-v', v); return 'accepted'; } catch (e) { return e.constructor.name; } }),
      // Like the web's own classes, these show no internals when enumerated or serialised.
      hidden: [Object.keys(new Response('x')), Object.keys(request), Object.keys(new Headers({ a: '1' })), JSON.stringify([new Response('x'), request, new Headers({ a: '1' })])],
    }, { headers: { 'x-app': 'yes' } });
  } };`);
  const r = await h.call('GET', '/x', { host: a.host });
  assert.is(r.status, 200, r.text);
  assert.is(r.headers.get('x-app'), 'yes');
  assert.equal(r.body, {
    h: '1, 2',
    ct: 'text/x',
    back: 'héllo',
    parsed: { z: 1 },
    href: 'https://example.com/c?d=2&e=f+g#h',
    all: ['1', '2'],
    b: ' x',
    rnd: 8,
    uuid: true,
    b64: 'aGk=',
    unb64: 'hi',
    waited: 1,
    ab: 3,
    bad: 'TypeError',
    names: ['TypeError', 'TypeError'],
    mixed: ['m', 'm'],
    trimmed: 'v w',
    crlf: ['TypeError', 'TypeError', 'TypeError'],
    hidden: [[], [], [], '[{},{},{}]'],
  });
  const binary = await serverApp(
    `export default { fetch() { return new Response(new Uint8Array([0, 255, 1]), { headers: { 'content-type': 'application/octet-stream' } }) } };`,
  );
  const res = await h.server.request(`http://${binary.host}/x`);
  assert.equal([...new Uint8Array(await res.arrayBuffer())], [0, 255, 1]);
});

test('a server module that does not load is stored as failed, records runtime.deploy_failed and never goes live', async () => {
  const good = await serverApp(`export default { fetch() { return new Response('good') } };`);
  const cases = [
    'export default { fetch() { return new Response("x") }',
    'throw new Error("top-level boom"); export default {};',
    "import { nope } from './missing.js'; export default {};",
  ];
  for (const source of cases) {
    const body = site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
    });
    const r = await h.call('PUT', `/v0/apps/${good.appId}`, { key, body });
    assert.is(r.status, 200, r.text);
    assert.is(r.body.status, 'stored', source);
    assert.is(r.body.activation.status, 'failed', source);
    assert.is(r.body.previous_release_id, good.releaseId);
    assert.is(
      (await h.call('GET', '/x', { host: good.host })).text,
      'good',
      'the working release keeps serving',
    );
    const rb = await h.call('POST', `/v0/apps/${good.appId}/rollback`, {
      key,
      body: { release_id: r.body.release_id },
    });
    assert.is(rb.status, 409, 'a failed release cannot be made live');
  }
  const ev = await events(good.appId, 'runtime.deploy_failed');
  assert.ok(ev.length >= 1);
  assert.is(ev[0].severity, 'error');
  const rels = await h.api('GET /v0/apps/{app_id}/releases', {
    key,
    params: { app_id: good.appId },
  });
  const failed = rels.releases.filter((x) => x.activation_status === 'failed');
  assert.is(failed.length, 3);
  assert.is(failed[0]!.activation_error?.code, 'failed');
});

test('strings with NUL characters cross the sandbox boundary intact', async () => {
  const a = await serverApp(`export default { async fetch(req) {
    const s = atob(btoa('a\\u0000b'));
    const round = new TextDecoder().decode(new TextEncoder().encode('x\\u0000y'));
    return new Response(JSON.stringify({ s: s.length, round: round.length, body: await req.text() }) + '\\u0000end');
  } };`);
  const r = await h.call('POST', '/x', {
    host: a.host,
    rawBody: 'in\u0000put',
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(r.status, 200, r.text);
  assert.ok(r.text.endsWith('\u0000end'), 'a text response keeps its NUL and what follows');
  assert.equal(JSON.parse(r.text.slice(0, -4)), { s: 3, round: 3, body: 'in\u0000put' });
});

test('a Hono app bundled into one file runs unchanged', async () => {
  const bundle = await build({
    entryPoints: ['test/fixtures/hono-app/server.ts'],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    target: 'es2022',
  });
  const source = bundle.outputFiles[0]!.text;
  const a = await serverApp(source);
  const hello = await h.call('GET', '/api/hello/world?q=z', { host: a.host });
  assert.is(hello.status, 200, hello.text);
  assert.equal(hello.body, { hello: 'world', q: 'z', app: a.appId });
  const echo = await h.call('POST', '/api/echo', { host: a.host, body: { a: 1, b: [2] } });
  assert.is(echo.status, 201);
  assert.equal(echo.body, { got: { a: 1, b: [2] }, type: 'application/json' });
  const redirect = await h.call('GET', '/api/redirect', { host: a.host });
  assert.is(redirect.status, 302);
  assert.is(redirect.headers.get('location'), '/api/hello/there');
  const text = await h.call('GET', '/api/text', { host: a.host });
  assert.is(text.text, 'plain text');
  assert.is(text.headers.get('x-custom'), 'yes');
  const missing = await h.call('GET', '/api/nope', { host: a.host });
  assert.is(missing.status, 404);
  assert.equal(missing.body, { error: 'not here' });
  const logs = await events(a.appId, 'runtime.log.info');
  assert.equal(logs[0].metadata, { keys: ['a', 'b'] });
});

test('rollback switches which server code answers', async () => {
  const v1 = await serverApp(`export default { fetch() { return new Response('one') } };`);
  const body2 = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file(
        'server.js',
        `export default { fetch() { return new Response('two') } };`,
        'text/javascript',
      ),
    ],
  });
  await h.call('PUT', `/v0/apps/${v1.appId}`, { key, body: body2 });
  assert.is((await h.call('GET', '/x', { host: v1.host })).text, 'two');
  await h.call('POST', `/v0/apps/${v1.appId}/rollback`, {
    key,
    body: { release_id: v1.releaseId },
  });
  assert.is((await h.call('GET', '/x', { host: v1.host })).text, 'one');
});

test.after(() => h.close());
test.run();
