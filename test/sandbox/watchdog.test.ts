/**
 * The watchdog ends a worker whose guest code the interrupt cannot stop (one long native operation)
 * after three times what the call itself may run at once, not after the largest plan's time: a
 * Free call stuck in one native operation does not hold a worker for the largest plan's minutes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { invokeSource } from '../_lib/sandbox.ts';

// reversing a huge array-like object is one native operation (many seconds of CPU here): the
// interrupt never sees it on either engine, only the watchdog does
const NATIVE = `export default { fetch() { return new Response(String(Array.prototype.reverse.call({ length: 1e9 }).length)); } };`;

test("a call that never yields is ended after three times its own budget, within the pool's hard limit", async () => {
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 50, ...DEFAULT_INSTANCE_LIMITS, memoryBytes: 256 * 2 ** 20, wallMs: 120_000 },
    hardKillMs: 120_000,
  });
  try {
    await pool.warm();
    const stopped = await invokeSource(pool, 'native', NATIVE);
    assert.is(stopped.ok, false);
    assert.is(stopped.error?.kind, 'timeout');
    // 50 ms of CPU loads a module within 250 ms: three times that is under a second, so a second
    assert.match(stopped.error!.message, 'more than 1000 ms without yielding');
    const after = await invokeSource(
      pool,
      'after',
      `export default { fetch() { return new Response('fine'); } };`,
    );
    assert.ok(after.ok, 'a new worker answers');
  } finally {
    await pool.close();
  }
});

test.run();
