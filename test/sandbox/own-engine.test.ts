/**
 * The platform's own QuickJS build (engine/, `npm run build:engine`): the committed files are the
 * ones its recorded inputs build, and the sandbox runs apps on it (the default; PLATFORM_ENGINE=stock for the stock variant) as it does
 * on the stock variant, with what the build adds: the engine's own stack check (deep recursion and
 * deep JSON end as a catchable error inside the app, never a crashed thread) and
 * ArrayBuffer.prototype.transfer.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { onDeno } from '../../src/lib/on-deno.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

/** calls deep that must answer: the default stack gets 4x on Node, 1/4 in a Deno worker (engine.md) */
const DEPTH = onDeno ? 300 : 5000;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('the committed engine is what its recorded inputs build', () => {
  const record = JSON.parse(readFileSync('engine/dist/build.json', 'utf8')) as {
    inputs: Record<string, string>;
    outputs: Record<string, string>;
  };
  for (const [file, hash] of Object.entries(record.inputs)) {
    if (!file.startsWith('engine/')) continue;
    assert.is(sha256(file), hash, `${file} changed since the build: run npm run build:engine`);
  }
  for (const [file, hash] of Object.entries(record.outputs))
    assert.is(sha256(`engine/dist/${file}`), hash, `engine/dist/${file}`);
});

let exits = 0;
const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 200, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 2000,
  onWorkerExit: () => exits++,
  engine: 'own',
});
await pool.warm();

test('the pool runs the own build', () => {
  assert.is(pool.engine.name, 'own');
});

test('a handler, a module with top-level await and promises answer', async () => {
  const r = await invokeSource(
    pool,
    'rel_own_tla',
    `const greeting = await Promise.resolve('hello');
     export default { async fetch(req) { const n = await new Promise((r) => setTimeout(() => r(2), 1)); return Response.json({ greeting, n, path: new URL(req.url).pathname }); } };`,
    '/p',
  );
  assert.ok(r.ok, JSON.stringify(r.error));
  assert.equal(JSON.parse(answerText(r)), { greeting: 'hello', n: 2, path: '/p' });
});

test('deep recursion and deep JSON are an error the app catches; the thread answers on', async () => {
  const r = await invokeSource(
    pool,
    'rel_own_deep',
    `const f = (n) => (n === 0 ? 0 : f(n - 1) + 1);
     export default { fetch() {
       const depth = f(${DEPTH});
       let runaway; try { const g = () => g(); g(); } catch (e) { runaway = e.message; }
       let json; try { JSON.parse('['.repeat(200000)); } catch (e) { json = e.message; }
       return Response.json({ depth, runaway, json });
     } };`,
  );
  assert.ok(r.ok, JSON.stringify(r.error));
  assert.equal(JSON.parse(answerText(r)), {
    depth: DEPTH,
    runaway: 'stack overflow',
    json: 'stack overflow',
  });
  const uncaught = await invokeSource(
    pool,
    'rel_own_uncaught',
    `export default { fetch() { const g = () => g(); return new Response(String(g())); } };`,
  );
  assert.is(uncaught.ok, false);
  assert.is(uncaught.error?.kind, 'stack');
  const next = await invokeSource(
    pool,
    'rel_own_next',
    `export default { fetch() { return new Response('still here'); } };`,
  );
  assert.is(answerText(next), 'still here');
  assert.is(exits, 0, 'no thread was lost');
});

test('ArrayBuffer.prototype.transfer moves the bytes and detaches the buffer', async () => {
  const r = await invokeSource(
    pool,
    'rel_own_transfer',
    `export default { async fetch() {
       const a = new Uint8Array([1, 2, 3]).buffer;
       const b = a.transfer(4);
       const big = new Uint8Array(9 * 1024 * 1024).fill(7);
       const back = new Uint8Array(await new Response(big).arrayBuffer());
       return Response.json({ detached: a.detached, b: [...new Uint8Array(b)], big: back.length, last: back[back.length - 1] });
     } };`,
  );
  assert.ok(r.ok, JSON.stringify(r.error));
  assert.equal(JSON.parse(answerText(r)), {
    detached: true,
    b: [1, 2, 3, 0],
    big: 9 * 1024 * 1024,
    last: 7,
  });
});

const ALS_APP = `const { AsyncLocalStorage } = globalThis[Symbol.for('platform.async_hooks')];
const als = new AsyncLocalStorage();
const seen = (where, log) => log.push(where + ':' + als.getStore());
export default {
  fetch(req, env, ctx) {
    const id = new URL(req.url).pathname.slice(1);
    return als.run(id, async () => {
      const log = [];
      seen('start', log);
      await new Promise((r) => setTimeout(r, id === 'a' ? 30 : 5));
      seen('timer', log);
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(id));
      seen('host', log);
      await Promise.resolve().then(() => seen('then', log));
      setTimeout(() => seen('in-timer', log), 1);
      ctx.waitUntil(new Promise((r) => setTimeout(r, 5)).then(() => seen('waitUntil', log)));
      await new Promise((r) => setTimeout(r, 10));
      queueMicrotask(() => seen('microtask', log));
      await null;
      return Response.json({ log, outside: als.getStore() === id });
    });
  },
};`;

test('AsyncLocalStorage: a store follows await, timers, host promises, then and waitUntil, never into another request', async () => {
  const [a, b] = await Promise.all([
    invokeSource(pool, 'rel_own_als', ALS_APP, '/a'),
    invokeSource(pool, 'rel_own_als', ALS_APP, '/b'),
  ]);
  for (const [r, id] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    assert.ok(r.ok, JSON.stringify(r.error));
    const body = JSON.parse(answerText(r));
    // the timers' order is the host's; what matters is that each saw this request's store
    assert.equal(
      [...body.log].sort(),
      ['host', 'in-timer', 'microtask', 'start', 'then', 'timer', 'waitUntil'].map(
        (w) => `${w}:${id}`,
      ),
      id,
    );
    assert.is(body.outside, true);
  }
});

test('a runaway loop is stopped at the CPU limit', async () => {
  const r = await invokeSource(pool, 'rel_own_loop', `export default { fetch() { for (;;) {} } };`);
  assert.is(r.ok, false);
  assert.is(r.error?.kind, 'timeout');
});

test('long built-ins stop at the CPU limit inside the engine: the thread lives and answers the next call', async () => {
  // each runs for seconds as one native call without the engine's interrupt polls
  // (engine/patches/0002-interrupt-polls.patch); `npm run bench:runaway` prints how long each takes
  const ops = {
    join: "new Array(3e8).join('').length",
    indexOf: 'new Array(3e8).indexOf(1)',
    includes: 'new Array(3e8).includes(1)',
    lastIndexOf: 'new Array(3e8).lastIndexOf(1)',
    replaceAll: "'a'.repeat(4e6).replaceAll('a', 'bb').length",
    jsonStringify: 'JSON.stringify(new Array(4e6).fill(0)).length',
  };
  for (const [name, code] of Object.entries(ops)) {
    const r = await invokeSource(
      pool,
      `rel_own_runaway_${name}`,
      `export default { fetch() { return new Response(String(${code})); } };`,
    );
    assert.is(r.ok, false, `${name} answered ${answerText(r)}`);
    assert.is(r.error?.kind, 'timeout', `${name}: ${JSON.stringify(r.error)}`);
  }
  const next = await invokeSource(
    pool,
    'rel_own_after_runaway',
    `export default { fetch() { return new Response('next'); } };`,
  );
  assert.is(answerText(next), 'next');
  assert.is(exits, 0, 'the engine stopped them, not the watchdog');
});

test.after(async () => {
  await pool.close();
});

test.run();
