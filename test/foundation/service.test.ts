import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDb, createPool } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { createServer } from '../../src/server.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
// A route that fails with an internal message, to check that 500s never leak it.
h.server.api.get('/boom', () => {
  throw new Error('connection string postgres://secret@db');
});

test('GET /healthz answers the HealthResponse with db ok and a request id', async () => {
  const r = await h.call('GET', '/healthz');
  assert.is(r.status, 200);
  assert.equal(r.body.status, 'ok');
  assert.equal(r.body.service, 'platform-api');
  assert.equal(r.body.db, 'ok');
  assert.is(r.body.api_base_url, 'http://api.localhost:8787');
  assert.ok(r.headers.get('x-request-id'));
});

test('healthz reports db unavailable instead of failing when Postgres is down', async () => {
  const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', 1);
  const deps = { ...h.deps, pool, db: createDb(pool), log: createLogger('silent') };
  const res = await createServer(deps).request('http://localhost/healthz');
  assert.is(res.status, 200);
  const body = await res.json();
  assert.is(body.status, 'ok');
  assert.is(body.db, 'unavailable');
  await deps.db.destroy();
});

test('host dispatch: API on api host, localhost and 127.0.0.1 with any port; console and docs hosts', async () => {
  for (const host of [
    'api.localhost',
    'api.localhost:9999',
    'localhost',
    'localhost:8787',
    '127.0.0.1:8787',
    'API.LOCALHOST',
  ]) {
    const r = await h.call('GET', '/healthz', { host });
    assert.is(r.status, 200, host);
  }
  const consoleV0 = await h.call('GET', '/v0/accounts', {
    host: 'console.localhost:8787',
    key: owner.api_key,
  });
  assert.is(consoleV0.status, 200);
  const docs = await h.call('GET', '/openapi.json', { host: 'docs.localhost' });
  assert.is(docs.status, 200);
  assert.is(docs.body.openapi, '3.1.0');
  const docsPage = await h.call('GET', '/reference', { host: 'docs.localhost' });
  assert.match(docsPage.text, '/v0/auth/api-keys');
  const unknown = await h.call('GET', '/healthz', { host: 'example.org' });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error.code, 'not_found');
  assert.ok(unknown.headers.get('x-request-id'));
});

test('unknown routes are 404 not_found with the error body', async () => {
  const r = await h.call('GET', '/nope');
  assert.is(r.status, 404);
  assert.equal(Object.keys(r.body), ['error']);
  assert.is(r.body.error.code, 'not_found');
  assert.type(r.body.error.message, 'string');
  const v0 = await h.call('GET', '/v0/nope', { key: owner.api_key });
  assert.is(v0.status, 404);
  assert.is(v0.body.error.code, 'not_found');
});

test('malformed JSON, a non-JSON content type and an invalid body are 400 with details', async () => {
  const bad = await h.call('POST', '/v0/auth/api-keys', {
    key: owner.api_key,
    rawBody: '{"name": ',
    headers: { 'content-type': 'application/json' },
  });
  assert.is(bad.status, 400);
  assert.is(bad.body.error.code, 'invalid_json');
  const text = await h.call('POST', '/v0/auth/api-keys', {
    key: owner.api_key,
    rawBody: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.is(text.status, 400);
  assert.is(text.body.error.code, 'unsupported_media_type');
  const invalid = await h.call('POST', '/v0/auth/api-keys', {
    key: owner.api_key,
    body: { name: 42, extra: true },
  });
  assert.is(invalid.status, 400);
  assert.is(invalid.body.error.code, 'invalid_request');
  assert.ok(invalid.body.error.details.fields.name);
  assert.ok(invalid.body.error.details.fields.extra, 'unknown properties are named');
});

test('an oversized body is 413 without reading it all', async () => {
  const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
  const r = await h.call('POST', '/v0/auth/api-keys', {
    key: owner.api_key,
    rawBody: big,
    headers: { 'content-type': 'application/json' },
  });
  assert.is(r.status, 413);
  assert.is(r.body.error.code, 'payload_too_large');
  // Chunked (no Content-Length) over a real socket is cut off by counting.
  const live = await listen(h.server);
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 40; i++)
        controller.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
      controller.close();
    },
  });
  const res = await fetch(`${live.url}/v0/auth/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.api_key}`, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  assert.is(res.status, 413);
  await res.text();
  await live.close();
});

test('a 500 never carries the internal message', async () => {
  const r = await h.call('GET', '/boom');
  assert.is(r.status, 500);
  assert.is(r.body.error.code, 'internal_error');
  assert.not.match(r.text, 'postgres://');
  assert.is(r.body.error.details.request_id, r.headers.get('x-request-id'));
});

test('every response over real HTTP carries X-Request-Id', async () => {
  const live = await listen(h.server);
  for (const path of ['/healthz', '/nope', '/v0/accounts']) {
    const res = await fetch(live.url + path);
    assert.ok(res.headers.get('x-request-id'), path);
    await res.text();
  }
  await live.close();
});

test.after(() => h.close());
test.run();
