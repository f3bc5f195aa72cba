/**
 * Text in and out of the sandbox as app code meets it: TextEncoder and TextDecoder give Node's
 * bytes and strings for every kind of text (NUL, lone surrogates, a leading U+0002, a BOM), and a
 * response re-wrapped from another's unread `body` (Hono's middleware after `await next()`) keeps
 * its text instead of streaming it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { callNewApp, publishServerApp } from '../_lib/apps.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, listen, newUser, wireRequest } from '../_lib/harness.ts';

const h = await createHarness();
const key = (await newUser(h)).api_key;
const wire = await listen(h.server);

/** The app's answer on a real socket (uncompressed): a whole answer carries its length, a streamed one is chunked. */
async function onTheWire(source: string) {
  const app = await publishServerApp(h, key, source);
  return wireRequest(wire.port, app.host, '/run');
}

const SAMPLES = [
  '',
  'plain ascii',
  'añ€😀z',
  'nul\u0000inside',
  '\u0000',
  'lone high \uD800 here',
  'lone low \uDC00',
  'ends high \uD83D',
  '\uDE00 starts low',
  '\u0002starts with U+0002',
  '\uFEFFwith a BOM',
  'ok pair 😀 then \uD800\uD800 two highs',
  'x'.repeat(70_000) + 'é', // past the host's kept string buffer
];

test('TextEncoder gives the bytes Node gives, and TextDecoder reads them back as Node does', async () => {
  const r = await callNewApp(
    h,
    key,
    `const SAMPLES = ${JSON.stringify(SAMPLES)};
     export default { async fetch() {
       const out = SAMPLES.map((s) => {
         const bytes = new TextEncoder().encode(s);
         return { bytes: Array.from(bytes), back: new TextDecoder().decode(bytes), kept: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes) };
       });
       return Response.json(out);
     } };`,
  );
  assert.is(r.status, 200, r.text);
  const got = r.json as { bytes: number[]; back: string; kept: string }[];
  for (const [i, s] of SAMPLES.entries()) {
    const bytes = new TextEncoder().encode(s);
    assert.equal(got[i]!.bytes, Array.from(bytes), `bytes of sample ${i}`);
    assert.is(got[i]!.back, new TextDecoder().decode(bytes), `decoded sample ${i}`);
    assert.is(
      got[i]!.kept,
      new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes),
      `decoded sample ${i}, BOM kept`,
    );
  }
});

test('a fatal TextDecoder throws a TypeError on invalid bytes; request.text() replaces them', async () => {
  const invalid = new Uint8Array([0x61, 0xff, 0x00, 0xc3, 0x28, 0x62]);
  const r = await callNewApp(
    h,
    key,
    `export default { async fetch(request) {
       const bytes = new Uint8Array(await request.clone().arrayBuffer());
       let thrown = null;
       try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch (e) { thrown = e.constructor.name; }
       return Response.json({ thrown, text: await request.text() });
     } };`,
    { method: 'POST', rawBody: invalid },
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, { thrown: 'TypeError', text: new TextDecoder().decode(invalid) });
});

test("a response made of another one's unread body keeps the text: sent whole, the original locked", async () => {
  const r = await onTheWire(
    `export default { async fetch() {
       const first = new Response('héllo \\u0000 wörld', { headers: { 'content-type': 'text/plain; charset=utf-8', 'x-first': '1' } });
       const again = new Response(first.body, first);
       again.headers.set('x-again', '1');
       let refused = null;
       try { await first.text(); } catch (e) { refused = e.constructor.name; }
       again.headers.set('x-original', first.body.locked + ' ' + refused);
       return again;
     } };`,
  );
  assert.is(r.status, 200, r.body);
  assert.is(r.body, 'héllo \u0000 wörld');
  assert.is(r.headers['x-first'], '1');
  assert.is(r.headers['x-again'], '1');
  assert.is(r.headers['x-original'], 'true TypeError');
  // sent whole, as the first response would have been: a length, not chunks
  assert.is(r.headers['content-length'], String(Buffer.byteLength('héllo \u0000 wörld')));
  assert.is(r.headers['transfer-encoding'], undefined);
});

test('a body stream that was read cannot be re-wrapped (a TypeError, as in Node and workerd); an unread one can', async () => {
  const r = await callNewApp(
    h,
    key,
    `export default { async fetch() {
       const bytes = new Response(new Uint8Array([104, 105, 33]));
       const reader = bytes.body.getReader();
       const first = await reader.read();
       reader.releaseLock();
       let rest;
       try { rest = await new Response(bytes.body).text(); } catch (e) { rest = e.name; }
       const copy = new Response(new Response(new Uint8Array([1, 2, 3])).body);
       return Response.json({ first: Array.from(first.value), rest, copy: Array.from(new Uint8Array(await copy.arrayBuffer())) });
     } };`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, { first: [104, 105, 33], rest: 'TypeError', copy: [1, 2, 3] });
});

test("Hono's middleware that sets a header after next() answers the handler's text whole", async () => {
  const r = await onTheWire(
    await bundleModule(`import { Hono } from 'hono';
const app = new Hono();
app.use(async (c, next) => { await next(); c.header('x-after', 'yes'); });
app.get('*', (c) => c.html('<p>' + 'é'.repeat(5000) + '</p>'));
export default app;`),
  );
  assert.is(r.status, 200, r.body);
  assert.ok(r.body === `<p>${'é'.repeat(5000)}</p>`, "the handler's text");
  assert.is(r.headers['x-after'], 'yes');
  assert.is(r.headers['content-length'], String(Buffer.byteLength(r.body)));
});

test.after(async () => {
  await wire.close();
  await h.close();
});
test.run();
