/**
 * Warm instances are bounded by the memory they hold, not by count: a worker keeps every release
 * that fits its budget warm (hundreds of small apps), evicts the least recently used idle ones when
 * a release needs room, and never answers one release's call from another's instance.
 */
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const LIMITS = { cpuMs: 500, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 };
// each module keeps a token made when it loaded: the same token again means the same warm instance
const source = (name: string, ballastKiB = 0) => `const token = Math.random().toString(36).slice(2);
  const ballast = new Uint8Array(${ballastKiB} * 1024).fill(1);
  export default { fetch(req) { return Response.json({ release: ${JSON.stringify(name)}, token, ballast: ballast.length }); } };`;

function caller(pool: SandboxPool) {
  return (name: string, ballastKiB = 0) =>
    jsonCaller<{ release: string; token: string }>(pool, (n) => source(n, ballastKiB))(name);
}

test('300 small releases all stay warm on one worker (no count cap), each answering from its own instance', async () => {
  const pool = new SandboxPool({ workers: 1, limits: LIMITS, hardKillMs: 3000 });
  try {
    const call = caller(pool);
    const first = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      const name = `rel_small_${i}`;
      const r = await call(name);
      assert.is(r.release, name);
      first.set(name, r.token);
    }
    for (const [name, token] of first) {
      const r = await call(name);
      assert.is(r.release, name, 'never another release’s instance');
      assert.is(r.token, token, `${name} was kept warm`);
    }
  } finally {
    await pool.close();
  }
});

test('under memory pressure the least recently used idle instances go, and come back fresh', async () => {
  // room for about five instances of ~1 MiB each
  const pool = new SandboxPool({
    workers: 1,
    limits: LIMITS,
    hardKillMs: 3000,
    instanceBudgetBytes: 6 * 1024 * 1024,
  });
  try {
    const call = caller(pool);
    const tokens = new Map<string, string>();
    for (let i = 0; i < 12; i++)
      tokens.set(`rel_big_${i}`, (await call(`rel_big_${i}`, 1024)).token);
    // the newest ones are still warm ...
    const newest = await call('rel_big_11', 1024);
    assert.is(newest.token, tokens.get('rel_big_11'));
    // ... the oldest were evicted: a new instance, a new token, the same release
    const oldest = await call('rel_big_0', 1024);
    assert.is(oldest.release, 'rel_big_0');
    assert.is.not(
      oldest.token,
      tokens.get('rel_big_0'),
      'evicted under pressure, then loaded afresh',
    );
    // a release that keeps being used stays warm while others come and go
    const hot = await call('rel_hot', 1024);
    for (let i = 20; i < 30; i++) {
      await call(`rel_big_${i}`, 1024);
      assert.is((await call('rel_hot', 1024)).token, hot.token, 'the most recently used is kept');
    }
  } finally {
    await pool.close();
  }
});

test.run();
