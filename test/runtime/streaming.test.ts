/**
 * Streamed responses over real HTTP: the first chunk reaches the visitor before the app has made
 * the next, server-sent events through hono/streaming, a stream that fails midway, a visitor who
 * goes away (the app's cancel runs) and a visitor who reads slowly (the app is held back).
 */
import http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsOf, publishServerApp, waitFor, type ServerApp } from '../_lib/apps.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

// one sandbox worker, so a module's variables are shared by the calls of one test
const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '1' });
const key = (await newUser(h)).api_key;
const server = await listen(h.server);
const port = new URL(server.url).port;

/** A GET over a real socket; resolves with the response as it starts, so the test reads it chunk by chunk. */
function get(app: ServerApp, path: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host: app.host } }, resolve);
    req.on('error', reject);
  });
}
const nextChunk = (res: http.IncomingMessage) =>
  new Promise<string>((resolve) => res.once('data', (d: Buffer) => resolve(d.toString())));
const rest = (res: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    res.on('data', (d: Buffer) => (text += d));
    res.on('end', () => resolve(text));
    res.on('error', () => resolve(text));
    res.on('aborted', () => resolve(text));
  });

test('the first chunk reaches the visitor before the app makes the next (it waits for the visitor to say so)', async () => {
  const app = await publishServerApp(
    h,
    key,
    `let go = false;
     export default { async fetch(request) {
       const path = new URL(request.url).pathname;
       if (path === '/go') { go = true; return new Response('ok'); }
       go = false;
       const enc = new TextEncoder();
       return new Response(new ReadableStream({
         start(c) { c.enqueue(enc.encode('first\\n')); },
         async pull(c) {
           while (!go) await new Promise((r) => setTimeout(r, 10));
           c.enqueue(enc.encode('second\\n'));
           c.close();
         },
       }), { headers: { 'content-type': 'text/plain' } });
     } };`,
  );
  const res = await get(app, '/stream');
  assert.is(res.statusCode, 200);
  assert.is(res.headers['content-type'], 'text/plain');
  assert.is(res.headers['content-length'], undefined, 'no length: it streams');
  // the first chunk arrives alone: the app cannot make the second until /go, which is sent after it
  assert.is(await nextChunk(res), 'first\n');
  assert.is((await h.call('GET', '/go', { host: app.host })).text, 'ok');
  assert.is(await rest(res), 'second\n');
});

test('server-sent events through hono/streaming arrive one by one', async () => {
  const app = await publishServerApp(
    h,
    key,
    await bundleModule(`import { Hono } from 'hono';
      import { streamSSE } from 'hono/streaming';
      const app = new Hono();
      app.get('/events', (c) => streamSSE(c, async (stream) => {
        for (let i = 1; i <= 3; i++) {
          await stream.writeSSE({ event: 'tick', id: String(i), data: JSON.stringify({ i }) });
          await stream.sleep(30);
        }
      }));
      export default { fetch: (req) => app.fetch(req) };`),
  );
  const res = await get(app, '/events');
  assert.is(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), 'text/event-stream');
  const first = await nextChunk(res);
  assert.match(first, 'event: tick');
  const text = first + (await rest(res));
  const data = text.match(/^data: .*$/gm);
  if (data?.length !== 3) {
    // seen once in CI under load (the stream ended after the first event, kind `exception`): say what the app met
    await new Promise((r) => setTimeout(r, 200));
    const failures = await eventsOf(h, key, app.appId, 'runtime.request_error');
    assert.unreachable(
      `got ${JSON.stringify(text)}; the app's errors: ${JSON.stringify(failures.map((e) => [e.message, e.metadata]))}`,
    );
  }
  assert.equal(data, ['data: {"i":1}', 'data: {"i":2}', 'data: {"i":3}']);
});

test('a stream that fails midway ends the response and records runtime.request_error', async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { fetch() {
       let n = 0;
       return new Response(new ReadableStream({ pull(c) { if (n++ === 0) c.enqueue(new TextEncoder().encode('partial')); else c.error(new Error('the source broke')); } }));
     } };`,
  );
  const res = await get(app, '/x');
  assert.is(res.statusCode, 200);
  assert.is(await rest(res), 'partial');
  const failure = await waitFor(
    async () => (await eventsOf(h, key, app.appId, 'runtime.request_error'))[0],
  );
  assert.equal([failure.metadata.kind, failure.metadata.streamed], ['exception', true]);
  assert.match(failure.metadata.error, 'the source broke');
});

test('a streamed 5xx gets the generic answer and still records what the app logged', async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { fetch() {
       console.error('rendering failed: no cache');
       return new Response(new ReadableStream({ async start(c) {
         console.warn('inside the stream');
         await null;
         c.enqueue(new TextEncoder().encode('Internal Server Error'));
         c.close();
       } }), { status: 500 });
     } };`,
  );
  const res = await get(app, '/broken');
  assert.is(res.statusCode, 500);
  assert.match(await rest(res), '"runtime_error"');
  const logged = await waitFor(async () => {
    const lines = [
      ...(await eventsOf(h, key, app.appId, 'runtime.log.error')),
      ...(await eventsOf(h, key, app.appId, 'runtime.log.warn')),
    ].map((e) => e.message);
    return lines.length === 2 && lines;
  });
  assert.equal(logged.sort(), ['inside the stream', 'rendering failed: no cache']);
  const failure = (await eventsOf(h, key, app.appId, 'runtime.request_error'))[0]!;
  assert.equal(
    [failure.metadata.kind, failure.metadata.error],
    ['status_5xx', 'Internal Server Error'],
  );
});

test("a visitor who goes away cancels the stream: the app's cancel runs", async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { fetch(request, ctx) {
       return new Response(new ReadableStream({
         async pull(c) { await new Promise((r) => setTimeout(r, 20)); c.enqueue(new TextEncoder().encode('tick ')); },
         cancel(reason) { ctx.log.info('cancelled', { reason: String(reason) }); },
       }));
     } };`,
  );
  const res = await get(app, '/x');
  assert.match(await nextChunk(res), 'tick');
  res.destroy();
  const log = await waitFor(async () => (await eventsOf(h, key, app.appId, 'runtime.log.info'))[0]);
  assert.is(log.message, 'cancelled');
  assert.equal(
    await eventsOf(h, key, app.appId, 'runtime.request_error'),
    [],
    'going away is not a failure',
  );
});

test('a visitor who reads slowly holds the app back instead of filling memory', async () => {
  const app = await publishServerApp(
    h,
    key,
    `let pulls = 0;
     export default { fetch(request) {
       if (new URL(request.url).pathname === '/count') return new Response(String(pulls));
       pulls = 0;
       const chunk = new Uint8Array(64 * 1024);
       return new Response(new ReadableStream({ pull(c) { pulls++; c.enqueue(chunk); } }));
     } };`,
  );
  const res = await get(app, '/x');
  await nextChunk(res);
  res.pause();
  const count = async () => Number((await h.call('GET', '/count', { host: app.host })).text);
  // what the sockets buffer fills, then nothing more is made until the visitor reads again
  let before = await count();
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await count();
    if (now === before) break;
    before = now;
  }
  await new Promise((r) => setTimeout(r, 300));
  const held = await count();
  assert.is(held, before, 'no chunk was made while the visitor did not read');
  assert.ok(
    held < 256,
    `${held} chunks of 64 KiB are in flight (socket buffers), far below the 1024 the byte cap allows`,
  );
  res.resume();
  await nextChunk(res);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok((await count()) > held, 'reading again lets the app go on');
  res.destroy();
});

test.after(async () => {
  await server.close();
  await h.close();
});
test.run();
