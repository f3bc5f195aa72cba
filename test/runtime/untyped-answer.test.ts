/**
 * An app's answer that names no Content-Type reaches the visitor without one, as Workers send it
 * (SvelteKit's `text()` answers bytes so; a browser sniffs what it gets). A typed answer keeps its
 * type, a string body gets the standard's text/plain, and the internal mark never leaves.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, listen, newUser, wireRequest } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const wire = await listen(h.server, 0, h.config);
const app = await publishServerApp(
  h,
  u.api_key,
  `export default { fetch(req) {
    const path = new URL(req.url).pathname;
    const bytes = new TextEncoder().encode('Cross-site POST form submissions are forbidden');
    if (path === '/bytes') return new Response(bytes, { status: 403, headers: { 'content-length': String(bytes.byteLength) } });
    if (path === '/stream') return new Response(new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } }));
    if (path === '/cookies') { const h = new Headers(); h.append('set-cookie', 'a=1'); h.append('set-cookie', 'b=2'); return new Response(bytes, { headers: h }); }
    if (path === '/typed') return new Response(bytes, { headers: { 'content-type': 'text/html' } });
    return new Response('a string');
  } };`,
  {},
);
const host = `${app.host}:8787`;

test.after(async () => {
  await wire.close();
  await h.close();
});

for (const path of ['/bytes', '/stream', '/cookies'])
  test(`bytes with no type go out with none (${path})`, async () => {
    const r = await wireRequest(wire.port, host, path);
    assert.ok(r.status === 403 || r.status === 200, String(r.status));
    assert.is(r.headers['content-type'], undefined, JSON.stringify(r.headers));
    assert.is(r.body, 'Cross-site POST form submissions are forbidden');
    assert.not.ok(
      Object.keys(r.headers).some((k) => k.startsWith('x-platform-')),
      JSON.stringify(r.headers),
    );
  });

test('a typed answer keeps its type; a string body is text/plain, as the standard makes it', async () => {
  assert.is((await wireRequest(wire.port, host, '/typed')).headers['content-type'], 'text/html');
  const text = await wireRequest(wire.port, host, '/string');
  assert.match(String(text.headers['content-type']), /^text\/plain;\s?charset=UTF-8$/i);
  assert.not.ok(Object.keys(text.headers).some((k) => k.startsWith('x-platform-')));
});

test.run();
