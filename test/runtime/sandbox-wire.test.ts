/**
 * Invocations and results cross the worker boundary as flat arrays (src/sandbox/wire.ts). Whatever
 * either side puts in comes out the same after a real structured clone, optional fields absent
 * rather than undefined, and a body still moves (transferred, not copied). The request reaches the
 * guest, and its answer's head comes back, as lines (answer.ts); the end-to-end behaviour of both is
 * in sandbox.test.ts and web-platform.test.ts.
 */
import { MessageChannel } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Invocation, InvocationResult } from '../../src/sandbox/protocol.ts';
import { readAnswer } from '../../src/sandbox/answer.ts';
import {
  decodeInvocation,
  decodeResult,
  encodeInvocation,
  encodeResult,
  requestInput,
} from '../../src/sandbox/wire.ts';

/** One real crossing: postMessage through a MessageChannel, with the given buffers transferred. */
async function cross<T>(value: T, transfer: ArrayBuffer[] = []): Promise<T> {
  const { port1, port2 } = new MessageChannel();
  const got = new Promise<T>((resolve) => port2.once('message', resolve));
  port1.postMessage(value, transfer);
  const v = await got;
  port1.close();
  return v;
}

const base: Invocation = {
  id: 7,
  handler: 'fetch',
  input: requestInput({
    method: 'POST',
    url: 'http://a.apps.localhost/x?y=1',
    headers: [
      ['content-type', 'text/plain'],
      ['x-two', 'a, b'],
    ],
    user: { id: 'u1', email: 'e@x.test', roles: ['admin'], verified: true },
  }),
  app: { app_id: 'app_1', origin: 'http://app_1.apps.localhost', release_id: 'rel_1' },
  release: { releaseId: 'rel_1', entry: 'server.js' },
  secrets: {},
  limits: { cpuMs: 50, memoryBytes: 1 << 26, stackBytes: 1 << 19, wallMs: 30_000 },
};

test('an invocation crosses unchanged, with or without its optional parts', async () => {
  assert.equal(decodeInvocation(await cross(encodeInvocation(base))), base);
  const body = new TextEncoder().encode('hello').buffer as ArrayBuffer;
  const full: Invocation = {
    ...base,
    body,
    release: { ...base.release, sources: { 'server.js': 'export default {}' } },
    flags: { appUsers: true, publicStores: ['avatars'] },
    secrets: { API_KEY: 'k' },
  };
  const back = decodeInvocation(await cross(encodeInvocation(full), [body]));
  assert.is(body.byteLength, 0, 'the body was transferred, not copied');
  assert.is(new TextDecoder().decode(back.body), 'hello');
  assert.equal({ ...back, body: undefined }, { ...full, body: undefined });
});

test("the request input is the guest prelude's lines: method, URL, user, then header names and values", () => {
  const lines = base.input.split('\n');
  assert.equal(lines.slice(0, 2), ['POST', 'http://a.apps.localhost/x?y=1']);
  assert.equal(JSON.parse(lines[2]!), {
    id: 'u1',
    email: 'e@x.test',
    roles: ['admin'],
    verified: true,
  });
  assert.equal(lines.slice(3), ['content-type', 'text/plain', 'x-two', 'a, b']);
  // no user, no headers: the user's line is empty and nothing follows it
  assert.is(requestInput({ method: 'GET', url: 'http://a/', headers: [] }), 'GET\nhttp://a/\n\n');
  // a header value no HTTP parser would pass cannot add lines
  assert.is(
    requestInput({ method: 'GET', url: 'http://a/', headers: [['x', 'a\r\nb']] }),
    'GET\nhttp://a/\n\nx\na  b',
  );
});

test("the guest's answer head is read as the prelude writes it", () => {
  assert.equal(readAnswer('200\n2\ncontent-type\ntext/plain\nset-cookie\na=1', false), {
    status: 200,
    headers: [
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1'],
    ],
  });
  assert.equal(readAnswer('404\n1\nx-empty\n\nnot\nfound\n', true), {
    status: 404,
    headers: [['x-empty', '']],
    text: 'not\nfound\n',
  });
  assert.equal(readAnswer('204\n0\n', true), { status: 204, headers: [], text: '' });
  assert.equal(readAnswer('200\n0', false), { status: 200, headers: [] });
  for (const bad of ['', '200', '200\nx', '200\n2\na\nb', '200\n-1'])
    assert.throws(() => readAnswer(bad, false), /malformed/, bad);
  // not a status: NaN, which the origin answers as a bad status
  for (const status of ['NaN', '1.5', '1e+21', '200\r', ' 200', '1000'])
    assert.ok(Number.isNaN(readAnswer(`${status}\n0`, false).status), status);
});

test('a result crosses unchanged, whatever it carries', async () => {
  const results: InvocationResult[] = [
    {
      ok: true,
      response: { status: 200, headers: [['content-type', 'text/plain']], text: 'hi' },
      cpuMs: 0.02,
      fetches: 0,
    },
    { ok: true, response: { status: 204, headers: [] }, cpuMs: 1 },
    { ok: true, response: { status: 200, headers: [['x', 'y']], streaming: true } },
    {
      ok: false,
      error: { kind: 'exception', message: 'boom', stack: 'at x' },
      logs: [{ level: 'error', message: 'boom', metadata: { n: 1 } }],
      cpuMs: 3,
      fetches: 2,
    },
    {
      ok: false,
      error: { kind: 'memory', message: 'out of memory' },
      poisoned: true,
      quarantine: { mode: 'own_worker', seconds: 600 },
    },
  ];
  for (const r of results) assert.equal(decodeResult(await cross(encodeResult(9, r))), r);
  const body = new Uint8Array([1, 2, 3]).buffer as ArrayBuffer;
  const wire = encodeResult(9, { ok: true, response: { status: 200, headers: [], body } });
  assert.is(wire[0], 9);
  const back = decodeResult(await cross(wire, [body]));
  assert.equal([...new Uint8Array(back.response!.body!)], [1, 2, 3]);
});

test.run();
