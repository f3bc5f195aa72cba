import { test } from 'uvu';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import * as assert from 'uvu/assert';
import { SandboxPool, type InvokeInput } from '../../src/sandbox/pool.ts';
import { waitFor } from '../_lib/apps.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

// A worker keeps one blank instance (prelude evaluated, no app) ready for the next release's
// first request. These check that a blank instance is never shared and takes each call's limits.
let workerExits = 0;
const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 200, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 2000,
  onWorkerExit: () => workerExits++,
});
await pool.warm();

/** A quiet moment: until the worker has made its next blank instance. */
const quiet = () => waitFor(async () => pool.sparesReady(), 5000);

const call = (releaseId: string, source: string, path = '/', limits?: InvokeInput['limits']) =>
  invokeSource(pool, releaseId, source, path, limits);
const text = answerText;

test('each release gets its own fresh globals, however quickly releases follow each other', async () => {
  const writer = `globalThis.shared = 'from A'; Object.prototype.polluted = 'yes';
    export default { fetch() { return new Response(String(globalThis.shared)); } };`;
  const reader = `export default { fetch() { return new Response(String(globalThis.shared) + ' ' + String(({}).polluted) + ' ' + typeof __host); } };`;
  await quiet();
  const a = await call('rel_writer', writer);
  assert.is(text(a), 'from A');
  // Straight after (no quiet moment) and after one: both readers see a clean global scope.
  assert.is(text(await call('rel_reader_1', reader)), 'undefined undefined undefined');
  await quiet();
  assert.is(text(await call('rel_reader_2', reader)), 'undefined undefined undefined');
  // The writer's own instance is kept warm and keeps its state.
  assert.is(text(await call('rel_writer', writer)), 'from A');
});

test('a blank instance takes the memory limit of the call that uses it', async () => {
  const bomb = `export default { fetch() { globalThis.a = []; for (let i = 0; i < 40; i++) a.push(new Uint8Array(1024 * 1024)); return new Response('kept ' + a.length + ' MiB'); } };`;
  await quiet();
  const small = await call('rel_small', bomb, '/', { memoryBytes: 16 * 1024 * 1024 });
  assert.is(small.ok, false, text(small));
  assert.is(small.error?.kind, 'memory');
  await quiet();
  const big = await call('rel_big', bomb);
  assert.is(big.ok, true, JSON.stringify(big.error));
  assert.is(text(big), 'kept 40 MiB');
});

test('a blank instance takes the stack limit of the call that uses it', async () => {
  const deep = `export default { fetch() { const f = (n) => (n === 0 ? 0 : f(n - 1) + 1); return new Response(String(f(2000))); } };`;
  await quiet();
  const shallow = await call('rel_shallow', deep, '/', { stackBytes: 64 * 1024 });
  assert.is(shallow.ok, false, text(shallow));
  assert.is(shallow.error?.kind, 'stack');
  await quiet();
  const ok = await call('rel_deep', deep);
  assert.is(text(ok), '2000', JSON.stringify(ok.error));
});

test('a call stopped at the wall-clock limit while it waits costs only its own instance, not the worker', async () => {
  const counter = `let n = 0; export default { fetch() { return new Response(String(++n)); } };`;
  const waiting = `export default { fetch(req) {
    if (req.url.endsWith('/timer')) return new Promise((r) => setTimeout(() => r(new Response('late')), 60000));
    return new Promise(() => {});
  } };`;
  const exitsBefore = workerExits;
  assert.is(text(await call('rel_counter', counter)), '1');
  for (const path of ['/never', '/timer']) {
    const r = await call('rel_waiting', waiting, path, { wallMs: 150 });
    assert.is(r.ok, false);
    assert.is(r.error?.kind, 'timeout', path);
  }
  // Same worker, same warm instance: the counter goes on, and the waiting app is served again.
  assert.is(text(await call('rel_counter', counter)), '2');
  assert.is(workerExits, exitsBefore);
});

test('URLSearchParams, console, timers and crypto work alike in a spare that loaded them and in an instance that had not', async () => {
  // They are chunks: a spare loads them when the worker is idle; a cold start that comes before that
  // compiles each only when its app touches it. App code sees which by the global's descriptor.
  const app = `export default { async fetch() {
    const state = ['URLSearchParams', 'console', 'setTimeout', 'crypto'].map((n) => (Object.getOwnPropertyDescriptor(globalThis, n).get ? 'lazy' : 'loaded'));
    const sp = new URL('http://x/?a=1&b=2').searchParams;
    sp.append('c', '3 4');
    const form = new Response(new URLSearchParams({ q: 'x y' }));
    console.log('hello', { n: 1 });
    const fired = await new Promise((r) => setTimeout((v) => r(v), 1, 'fired'));
    clearTimeout(12345);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array([1]))).length;
    return Response.json({ state, sp: sp.toString(), form: [form.headers.get('content-type'), await form.text()], fired,
      random: crypto.getRandomValues(new Uint8Array(4)).length, uuid: crypto.randomUUID().length, digest,
      proto: Object.getPrototypeOf(crypto) === Crypto.prototype, names: [setTimeout.name, clearInterval.name, URLSearchParams.name] });
  } };`;
  const expected = {
    sp: 'a=1&b=2&c=3+4',
    form: ['application/x-www-form-urlencoded;charset=UTF-8', 'q=x+y'],
    fired: 'fired',
    random: 4,
    uuid: 36,
    digest: 32,
    proto: true,
    names: ['setTimeout', 'clearInterval', 'URLSearchParams'],
  };
  const seen = new Set<string>();
  const check = async (releaseId: string) => {
    const r = await call(releaseId, app);
    assert.is(r.ok, true, JSON.stringify(r.error));
    const { state, ...rest } = JSON.parse(text(r));
    assert.equal(rest, expected);
    assert.equal(
      r.logs?.map((l) => l.message),
      ['hello {"n":1}'],
    );
    seen.add(state.join(','));
  };
  // Three new releases at once: the second and third reach the worker while the first holds its
  // spare, so they start in instances made on the spot (waiting for each answer in turn would
  // depend on the test's own speed: a slow moment lets the worker preload its next spare first).
  await Promise.all([0, 1, 2].map((i) => check(`rel_parts_${i}`)));
  assert.ok(seen.has('lazy,lazy,lazy,lazy'), [...seen].join(' / '));
  // after a quiet moment, the spare has them
  await quiet();
  await check('rel_parts_quiet');
  assert.ok(seen.has('loaded,loaded,loaded,loaded'), [...seen].join(' / '));
});

test.after(() => pool.close());
test.run();
