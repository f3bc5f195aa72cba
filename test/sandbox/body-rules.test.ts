/**
 * The fetch standard's body rules, as Node and workerd apply them: a null-body status (204, 205, 304)
 * with a body, a locked or already-read stream as a body, a reason phrase with a line break, a
 * Request made from one whose body was read are TypeErrors; a body read through its stream is
 * used; Response.error() is a network error (type "error", status 0, immutable headers), which a
 * handler returning it fails its call with.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { badResponse } from '../../src/origin/scrub.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { invokeSource, jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = {};
const t = async (name, f) => { try { out[name] = await f(); } catch (e) { out[name] = 'throws ' + e.name; } };
const stream = () => new ReadableStream({ start(c) { c.enqueue(new Uint8Array([104, 105])); c.close(); } });
await t('error type', () => Response.error().type);
await t('error status', () => Response.error().status);
await t('error ok', () => Response.error().ok);
await t('error clone type', () => Response.error().clone().type);
await t('error headers are immutable', () => { Response.error().headers.set('a', 'b'); return 'set'; });
await t('204 with a body', () => new Response('x', { status: 204 }).status);
await t('205 with an empty string', () => new Response('', { status: 205 }).status);
await t('304 with bytes', () => new Response(new Uint8Array(1), { status: 304 }).status);
await t('204 without a body', () => new Response(null, { status: 204 }).status);
await t('locked stream', () => { const s = stream(); s.getReader(); return new Response(s).status; });
await t('read stream', async () => { const s = stream(); const r = s.getReader(); await r.read(); r.releaseLock(); return new Response(s).status; });
await t('fresh stream', async () => await new Response(stream()).text());
await t('bodyUsed after reading the stream', async () => { const r = new Response('x'); await r.body.getReader().read(); return r.bodyUsed; });
await t('text after reading the stream', async () => { const r = new Response('xy'); const rd = r.body.getReader(); await rd.read(); rd.releaseLock(); return await r.text(); });
await t('bodyUsed before reading', () => new Response('x').bodyUsed);
await t('request from a read request', async () => { const q = new Request('http://a.test/', { method: 'POST', body: 'x' }); await q.text(); return new Request(q).method; });
await t('request from a read request with a new body', async () => { const q = new Request('http://a.test/', { method: 'POST', body: 'x' }); await q.text(); return await new Request(q, { body: 'y' }).text(); });
await t('reason phrase with a line break', () => new Response('', { statusText: 'a\\nb' }).statusText);
await t('reason phrase', () => new Response('', { statusText: 'Fine\\tthanks é' }).statusText);
return out;`;

const EXPECTED = {
  'error type': 'error',
  'error status': 0,
  'error ok': false,
  'error clone type': 'error',
  'error headers are immutable': 'throws TypeError',
  '204 with a body': 'throws TypeError',
  '205 with an empty string': 'throws TypeError',
  '304 with bytes': 'throws TypeError',
  '204 without a body': 204,
  'locked stream': 'throws TypeError',
  'read stream': 'throws TypeError',
  'fresh stream': 'hi',
  'bodyUsed after reading the stream': true,
  'text after reading the stream': 'throws TypeError',
  'bodyUsed before reading': false,
  'request from a read request': 'throws TypeError',
  'request from a read request with a new body': 'y',
  'reason phrase with a line break': 'throws TypeError',
  'reason phrase': 'Fine\tthanks é',
};

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 5000,
});

test('body rules answer as the fetch standard (and Node, and workerd) have them', async () => {
  const call = jsonCaller<Record<string, unknown>>(
    pool,
    () =>
      `export default { async fetch() { return Response.json(await (async () => { ${CASES} })()); } };`,
  );
  assert.equal(await call('rel_body_rules'), EXPECTED);
});

test('a handler that returns Response.error() fails its call at the origin (a status out of range)', async () => {
  const r = await invokeSource(
    pool,
    'rel_body_error',
    `export default { fetch() { return Response.error(); } };`,
  );
  assert.ok(r.ok && r.response, JSON.stringify(r.error));
  assert.is(r.response.status, 0);
  assert.is(badResponse(r.response), 'bad_status');
});

test.after(() => pool.close());
test.run();
