/**
 * App code's outbound fetch against real HTTP servers on loopback: one on 127.0.0.1 (allowed here
 * through PLATFORM_FETCH_ALLOW, as an operator would) and one on 127.0.0.2 (never allowed). Every
 * refusal is checked on the server's side too: it received nothing.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { callNewApp, eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';
import { usageByDay } from '../../src/usage/counters.ts';
import { createHarness, listen, newUser, type Harness } from '../_lib/harness.ts';
import { startDns } from '../_lib/dns-server.ts';

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };

/** A loopback server that records what reaches it; `/hang` never answers, `/r/<n>` redirects n times, `/to?url=` redirects there. */
async function server(host: string): Promise<{
  url: string;
  seen: Seen[];
  hanging: http.IncomingMessage[];
  concurrency: { now: number; max: number };
  close(): Promise<void>;
}> {
  const seen: Seen[] = [];
  const hanging: http.IncomingMessage[] = [];
  const concurrency = { now: 0, max: 0 };
  const releases: (() => void)[] = [];
  const heldWaiters: (() => void)[] = [];
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const u = new URL(req.url!, 'http://x');
      if (u.pathname === '/hang') {
        hanging.push(req);
        return void heldWaiters.splice(0).forEach((f) => f());
      }
      if (u.pathname === '/held') {
        // answers once more than `after` requests hang here: the app aborts one it knows is in flight
        const after = Number(u.searchParams.get('after'));
        const answer = () =>
          hanging.length > after ? res.end(String(hanging.length)) : heldWaiters.push(answer);
        return void answer();
      }
      if (u.pathname === '/drip') {
        // the first part now, the rest once /release is asked for
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('one;');
        return void releases.push(() => res.end('two;'));
      }
      if (u.pathname === '/release') {
        releases.splice(0).forEach((f) => f());
        return void res.end('released');
      }
      if (u.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const mib = Buffer.alloc(1024 * 1024, 7);
        for (let i = 0; i < 12; i++) res.write(mib);
        return void res.end();
      }
      if (u.pathname === '/slow') {
        concurrency.max = Math.max(concurrency.max, ++concurrency.now);
        return void setTimeout(() => {
          concurrency.now--;
          res.end('slow');
        }, 40);
      }
      const hop = /^\/r\/(\d+)$/.exec(u.pathname);
      if (hop)
        return void res
          .writeHead(302, { location: Number(hop[1]) > 1 ? `/r/${Number(hop[1]) - 1}` : '/echo' })
          .end();
      if (u.pathname === '/to')
        return void res.writeHead(307, { location: u.searchParams.get('url')! }).end();
      if (u.pathname === '/bytes')
        return void res
          .writeHead(200, { 'content-type': 'application/octet-stream' })
          .end(Buffer.from([0, 1, 2, 253, 254, 255]));
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-server': 'yes',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.end(
        JSON.stringify({
          method: req.method,
          path: req.url,
          headers: req.headers,
          body: body.toString('base64'),
        }),
      );
    });
  });
  await new Promise<void>((r) => s.listen(0, host, r));
  const { port } = s.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    seen,
    hanging,
    concurrency,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

const allowed = await server('127.0.0.1');
const other = await server('127.0.0.2');
// a generous CPU limit (Free's, raised by a plans file): these calls wait on sockets under a loaded suite
const h = await createHarness({
  PLATFORM_FETCH_ALLOW: '127.0.0.1',
  PLATFORM_PLANS_FILE: 'test/fixtures/plans-roomy-cpu.json',
});
// a short wall-clock limit, for the server that never answers
const short = await createHarness({
  PLATFORM_FETCH_ALLOW: '127.0.0.1',
  PLATFORM_SANDBOX_WALL_MS: '1500',
});
const strict = await createHarness();
const key = (await newUser(h)).api_key;
const strictKey = (await newUser(strict)).api_key;
const shortKey = (await newUser(short)).api_key;

/** Publishes `body` as the inside of `async fetch(request)` and calls it once. */
const run = (on: Harness, k: string, body: string, headers: Record<string, string> = {}) =>
  callNewApp(on, k, `export default { async fetch(request) { ${body} } };`, { headers });

test('GET: headers go out as the app set them and come back, set-cookie included; nothing of the visitor or the platform goes along', async () => {
  const r = await run(
    h,
    key,
    `const res = await fetch('${allowed.url}/echo?q=1', { headers: { 'x-app': 'hello' } });
     const echo = await res.json();
     return Response.json({ status: res.status, ok: res.ok, server: res.headers.get('x-server'), cookies: res.headers.getSetCookie(), url: res.url, redirected: res.redirected, echo });`,
    { cookie: 'visitor=secret', authorization: 'Bearer visitor-token' },
  );
  assert.is(r.status, 200, r.text);
  assert.equal(
    [r.json.status, r.json.ok, r.json.server, r.json.cookies, r.json.redirected],
    [200, true, 'yes', ['a=1', 'b=2'], false],
  );
  assert.is(r.json.url, `${allowed.url}/echo?q=1`);
  assert.is(r.json.echo.method, 'GET');
  assert.is(r.json.echo.headers['x-app'], 'hello');
  const sent = JSON.stringify(r.json.echo.headers);
  for (const leak of [
    'visitor=secret',
    'visitor-token',
    'x-request-id',
    'x-forwarded',
    'apps.localhost',
  ])
    assert.not.match(sent, leak, `${leak} did not go out`);
  // counted for the app, by UTC day (what plans and analytics read)
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(
    await waitFor(
      async () => (await usageByDay(h.deps.db, r.appId, 'outbound.requests', today))[0],
    ),
    { day: today, value: 1 },
  );
});

test('POST with a binary body; a binary answer comes back byte for byte', async () => {
  const r = await run(
    h,
    key,
    `const sent = await (await fetch('${allowed.url}/echo', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 255, 10, 13]) })).json();
     const back = new Uint8Array(await (await fetch('${allowed.url}/bytes')).arrayBuffer());
     return Response.json({ method: sent.method, body: sent.body, type: sent.headers['content-type'], back: [...back] });`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, {
    method: 'POST',
    body: Buffer.from([0, 255, 10, 13]).toString('base64'),
    type: 'application/octet-stream',
    back: [0, 1, 2, 253, 254, 255],
  });
});

test('a response body is read as it arrives: the first part before the server sends the rest; past 10 MiB only as a stream', async () => {
  const r = await run(
    h,
    key,
    `const res = await fetch('${allowed.url}/drip');
     const reader = res.body.getReader();
     const first = new TextDecoder().decode((await reader.read()).value);
     await (await fetch('${allowed.url}/release')).text();
     let rest = '';
     for (;;) { const { done, value } = await reader.read(); if (done) break; rest += new TextDecoder().decode(value); }
     const big = await fetch('${allowed.url}/big');
     let size = 0;
     for await (const chunk of big.body) size += chunk.byteLength;
     let whole = null;
     try { await (await fetch('${allowed.url}/big')).arrayBuffer(); } catch (e) { whole = e.name + ': ' + e.message; }
     return Response.json({ first, rest, size, whole });`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal([r.json.first, r.json.rest, r.json.size], ['one;', 'two;', 12 * 1024 * 1024]);
  assert.match(r.json.whole, /^TypeError: .*larger than 10 MiB/);
});

test('a fetched response handed back to the visitor streams through', async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { fetch() { return fetch('${allowed.url}/drip'); } };`,
  );
  const served = await listen(h.server);
  try {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http
        .get(
          {
            host: '127.0.0.1',
            port: new URL(served.url).port,
            path: '/p',
            headers: { host: app.host },
          },
          resolve,
        )
        .on('error', reject),
    );
    // paused after the first part, so the rest waits in the stream until it is read below (a
    // flowing stream with no listener drops what arrives meanwhile)
    const first = await new Promise<string>((resolve) =>
      res.once('data', (d: Buffer) => {
        res.pause();
        resolve(d.toString());
      }),
    );
    assert.is(
      first,
      'one;',
      'the first part arrived while the upstream server still held the rest',
    );
    await fetch(`${allowed.url}/release`);
    let rest = '';
    for await (const d of res) rest += d;
    assert.is(rest, 'two;');
  } finally {
    await served.close();
  }
});

test('a request body that is a stream goes out as it is produced (chunked), and is not sent again on a 307', async () => {
  const r = await run(
    h,
    key,
    `const body = () => { let n = 0; return new ReadableStream({ async pull(c) { await new Promise((r) => setTimeout(r, 5)); if (n === 3) c.close(); else c.enqueue(new TextEncoder().encode('part' + n++ + ';')); } }); };
     const echo = await (await fetch('${allowed.url}/echo', { method: 'POST', body: body(), headers: { 'content-type': 'text/plain' } })).json();
     let again = null;
     try { await fetch('${allowed.url}/to?url=%2Fecho', { method: 'POST', body: body() }); } catch (e) { again = e.name + ': ' + e.message; }
     return Response.json({ body: echo.body, encoding: echo.headers['transfer-encoding'] ?? null, length: echo.headers['content-length'] ?? null, again });`,
  );
  assert.is(r.status, 200, r.text);
  assert.is(Buffer.from(r.json.body, 'base64').toString(), 'part0;part1;part2;');
  assert.equal([r.json.encoding, r.json.length], ['chunked', null]);
  assert.match(r.json.again, /^TypeError: .*streamed request body cannot be sent again/);
});

test('redirects are followed (and reported), or handed back with redirect: "manual", or refused with "error"', async () => {
  const r = await run(
    h,
    key,
    `const followed = await fetch('${allowed.url}/r/3');
     const manual = await fetch('${allowed.url}/r/1', { redirect: 'manual' });
     let error = null;
     try { await fetch('${allowed.url}/r/1', { redirect: 'error' }); } catch (e) { error = e.constructor.name; }
     const twenty = (await fetch('${allowed.url}/r/20')).status;
     let tooMany = null;
     try { await fetch('${allowed.url}/r/21'); } catch (e) { tooMany = e.message; }
     return Response.json({ url: followed.url, redirected: followed.redirected, path: (await followed.json()).path, manual: [manual.status, manual.headers.get('location')], error, twenty, tooMany });`,
  );
  assert.is(r.status, 200, r.text);
  assert.match(r.json.tooMany, 'redirected more than 20 times');
  delete r.json.tooMany;
  assert.equal(r.json, {
    url: `${allowed.url}/echo`,
    redirected: true,
    path: '/echo',
    manual: [302, '/echo'],
    error: 'TypeError',
    twenty: 200,
  });
});

test('an AbortSignal aborts a fetch in flight: the app sees the reason, the server sees the connection close', async () => {
  const before = allowed.hanging.length;
  const r = await run(
    h,
    key,
    `const c = new AbortController();
     const inFlight = fetch('${allowed.url}/hang', { signal: c.signal });
     await (await fetch('${allowed.url}/held?after=${before}')).text();
     c.abort();
     try { await inFlight; return new Response('not aborted'); }
     catch (e) { return Response.json({ name: e.name }); }`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, { name: 'AbortError' });
  const req = allowed.hanging[before];
  assert.ok(req, 'the request reached the server');
  await new Promise<void>((ok) =>
    req!.socket.destroyed ? ok() : req!.socket.once('close', () => ok()),
  );
});

test('of 51 requests at once, 6 run at a time and the 51st is refused; a server that never answers ends the call at its wall-clock limit', async () => {
  allowed.concurrency.max = 0;
  const capped = await run(
    h,
    key,
    `const all = await Promise.allSettled(Array.from({ length: 51 }, () => fetch('${allowed.url}/slow').then((r) => r.text())));
     const refused = all.filter((x) => x.status === 'rejected').map((x) => x.reason.name + ': ' + x.reason.message);
     return Response.json({ ok: all.filter((x) => x.status === 'fulfilled' && x.value === 'slow').length, refused });`,
  );
  assert.is(capped.status, 200, capped.text);
  assert.is(capped.json.ok, 50);
  assert.equal(capped.json.refused.length, 1);
  assert.match(capped.json.refused[0], /^TypeError: .*at most 50 requests/);
  assert.ok(
    allowed.concurrency.max <= 6 && allowed.concurrency.max >= 2,
    `at most 6 at once (saw ${allowed.concurrency.max})`,
  );

  const stuck = await run(
    short,
    shortKey,
    `await fetch('${allowed.url}/hang'); return new Response('answered');`,
  );
  assert.is(stuck.status, 500);
  assert.is(stuck.json.error.code, 'runtime_error');
  const kinds = (await eventsOf(short, shortKey, stuck.appId, 'runtime.request_error')).map(
    (e) => e.metadata.kind,
  );
  assert.equal(kinds, ['timeout']);
});

test('without an allowance every spelling of loopback is refused, and the server receives nothing', async () => {
  const port = new URL(allowed.url).port;
  const received = allowed.seen.length;
  const targets = [
    `127.0.0.1:${port}`,
    `127.5.5.5:${port}`,
    `localhost:${port}`,
    `[::1]:${port}`,
    `[::ffff:127.0.0.1]:${port}`,
    `2130706433:${port}`,
    `0x7f000001:${port}`,
    `0177.0.0.1:${port}`,
  ];
  const r = await run(
    strict,
    strictKey,
    `const out = {};
     for (const t of ${JSON.stringify(targets)}) {
       try { await fetch('http://' + t + '/echo'); out[t] = 'fetched'; } catch (e) { out[t] = e.name + ': ' + e.message; }
     }
     return Response.json(out);`,
  );
  assert.is(r.status, 200, r.text);
  for (const t of targets)
    assert.match(
      r.json[t],
      /^TypeError: fetch to .* refused: .*(loopback|unspecified)/,
      `${t}: ${r.json[t]}`,
    );
  assert.is(allowed.seen.length, received, 'nothing reached the server');
});

test("a redirect from an allowed host to a refused one is refused at that hop; so are other schemes and the platform's own hosts", async () => {
  const received = other.seen.length;
  const r = await run(
    h,
    key,
    `const out = [];
     for (const u of ['${allowed.url}/to?url=${encodeURIComponent(`${other.url}/echo`)}', '${other.url}/echo', 'file:///etc/passwd', 'http://x.apps.localhost/', 'http://api.localhost:8787/v0/apps']) {
       try { await fetch(u); out.push('fetched ' + u); } catch (e) { out.push(e.message); }
     }
     return Response.json(out);`,
  );
  assert.is(r.status, 200, r.text);
  assert.match(r.json[0], /fetch to 127\.0\.0\.2 refused: loopback address/);
  assert.match(r.json[1], /fetch to 127\.0\.0\.2 refused: loopback address/);
  assert.match(r.json[2], /only http and https/);
  assert.match(r.json[3], /this platform's own host/);
  assert.match(r.json[4], /this platform's own host/);
  assert.is(other.seen.length, received, 'nothing reached the refused server');
});

test("app code's names are asked of the DNS servers directly (PLATFORM_DNS_SERVERS), not the system's thread-pool look-up: a zone that never answers fails those fetches alone", async () => {
  const dns = await startDns();
  dns.set('echo.test', [{ type: 'A', value: '127.0.0.1' }]);
  dns.set('inside.test', [{ type: 'A', value: '127.0.0.2' }]);
  dns.silence('silent.test');
  const d = await createHarness({
    PLATFORM_FETCH_ALLOW: '127.0.0.1',
    PLATFORM_DNS_SERVERS: dns.server,
    PLATFORM_PLANS_FILE: 'test/fixtures/plans-roomy-cpu.json',
  });
  try {
    const dk = (await newUser(d)).api_key;
    const port = (u: string) => new URL(u).port;
    const names = await run(
      d,
      dk,
      `const out = [];
       for (const u of ['http://echo.test:${port(allowed.url)}/echo', 'http://inside.test:${port(other.url)}/echo', 'http://missing.test/']) {
         try { const res = await fetch(u); out.push(res.status); } catch (e) { out.push(e.message); }
       }
       return Response.json(out);`,
    );
    assert.is(names.status, 200, names.text);
    assert.is(names.json[0], 200, 'a name the test server answers is fetched');
    assert.match(
      names.json[1],
      /fetch to inside\.test refused: it resolves to 127\.0\.0\.2, a loopback address/,
    );
    assert.match(
      names.json[2],
      /^fetch to missing\.test failed: .*(ENOTFOUND|ENODATA)/,
      names.json[2],
    );

    // four requests with six fetches each to names nobody answers, while another app uses the thread pool
    const silent = await publishServerApp(
      d,
      dk,
      `export default { async fetch() {
      const r = await Promise.allSettled([1, 2, 3, 4, 5, 6].map((i) => fetch('http://n' + i + '.silent.test/')));
      return Response.json(r.map((x) => x.reason?.message ?? 'fetched'));
    } };`,
      { index: 'x' },
    );
    const digest = await publishServerApp(
      d,
      dk,
      `export default { async fetch() {
      return new Response(String(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('x')))[0]));
    } };`,
      { index: 'x' },
    );
    const asked = dns.questions();
    let silentDone = false;
    const stuck = Promise.all(
      [1, 2, 3, 4].map(() => d.call('GET', '/x', { host: silent.host })),
    ).finally(() => (silentDone = true));
    await waitFor(async () => dns.questions() - asked >= 24); // every look-up has begun
    const answered = await d.call('GET', '/x', { host: digest.host });
    assert.is(answered.text, String(createHash('sha256').update('x').digest()[0]));
    assert.is(silentDone, false, 'answered while the 24 look-ups waited');
    for (const r of await stuck) {
      assert.is(r.status, 200, r.text);
      for (const message of r.body)
        assert.match(message, /^fetch to n\d\.silent\.test failed: .*ETIMEOUT/, message);
    }
  } finally {
    await d.close();
    await dns.close();
  }
});

test.after(async () => {
  await h.close();
  await strict.close();
  await short.close();
  await allowed.close();
  await other.close();
});
test.run();
