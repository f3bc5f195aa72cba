/**
 * Where a release's calls go when there are several sandbox workers: a release new to every worker
 * starts wherever a blank instance is ready, and from then on every call of it reaches that same
 * warm instance (its module state survives between calls), also when its first calls arrive at once.
 */
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const LIMITS = { cpuMs: 500, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 };
// the token is made when the module loads: the same token means the same instance
const source = (name: string) => `const token = Math.random().toString(36).slice(2);
  let calls = 0;
  export default { fetch() { calls++; return Response.json({ release: ${JSON.stringify(name)}, token, calls }); } };`;

const caller = (pool: SandboxPool) =>
  jsonCaller<{ release: string; token: string; calls: number }>(pool, source);

test('back-to-back cold starts over two workers: every release keeps answering from the instance it started in', async () => {
  const pool = new SandboxPool({ workers: 2, limits: LIMITS, hardKillMs: 3000 });
  try {
    await pool.warm();
    const call = caller(pool);
    const tokens = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const name = `rel_seq_${i}`;
      const r = await call(name);
      assert.is(r.release, name);
      assert.is(r.calls, 1, 'a fresh instance');
      tokens.set(name, r.token);
    }
    for (let round = 2; round <= 3; round++) {
      for (const [name, token] of tokens) {
        const r = await call(name);
        assert.is(r.release, name, 'never another release’s instance');
        assert.is(r.token, token, `${name} stayed on its worker`);
        assert.is(r.calls, round);
      }
    }
  } finally {
    await pool.close();
  }
});

test('the first calls of a new release, arriving together, all reach one instance', async () => {
  const pool = new SandboxPool({ workers: 2, limits: LIMITS, hardKillMs: 3000 });
  try {
    await pool.warm();
    const call = caller(pool);
    for (let i = 0; i < 20; i++) {
      const name = `rel_burst_${i}`;
      const answers = await Promise.all([call(name), call(name), call(name)]);
      assert.equal(
        new Set(answers.map((a) => a.token)).size,
        1,
        `${name}: one instance for its first calls`,
      );
      assert.equal(answers.map((a) => a.calls).sort(), [1, 2, 3]);
      const later = await call(name);
      assert.is(later.token, answers[0]!.token);
      assert.is(later.calls, 4);
    }
  } finally {
    await pool.close();
  }
});

test.run();
