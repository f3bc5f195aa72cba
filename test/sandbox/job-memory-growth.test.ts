/**
 * A promise job that grows the WASM memory (a large allocation after an `await`) leaves nothing
 * behind: the instance it ran in is disposed cleanly when its call ends, and the sandbox thread with
 * every other app on it goes on. (quickjs-emscripten's executePendingJobs read the last job's context
 * through a view the growth had detached, made a stray context for it, and disposing the runtime then
 * aborted the thread; the platform reads it itself, src/sandbox/fast-calls.ts.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const GROW_THEN = (end: string) => `export default { async fetch() {
  await null;
  const a = [];
  for (let i = 0; i < 300000; i++) a.push([i]);
  globalThis.keep = a;
  ${end}
} };`;

for (const engine of ['own', 'stock'] as const) {
  test(`${engine} engine: a job that grows the memory, then times out or overflows, costs only its own instance`, async () => {
    let exits = 0;
    const pool = new SandboxPool({
      workers: 1,
      limits: {
        cpuMs: 500,
        ...DEFAULT_INSTANCE_LIMITS,
        memoryBytes: 128 * 2 ** 20,
        wallMs: 10_000,
      },
      hardKillMs: 10_000,
      onWorkerExit: () => exits++,
      engine,
    });
    try {
      await pool.warm();
      const timedOut = await invokeSource(
        pool,
        `rel_grow_loop_${engine}`,
        GROW_THEN('for (;;) {}'),
      );
      assert.is(timedOut.error?.kind, 'timeout', JSON.stringify(timedOut.error));
      const overflowed = await invokeSource(
        pool,
        `rel_grow_deep_${engine}`,
        GROW_THEN('const f = () => f(); f();'),
      );
      assert.is(overflowed.error?.kind, 'stack', JSON.stringify(overflowed.error));
      for (const n of [1, 2]) {
        const r = await invokeSource(
          pool,
          `rel_after_${engine}_${n}`,
          `export default { fetch() { return new Response('fine'); } };`,
        );
        assert.is(answerText(r), 'fine');
      }
      assert.is(exits, 0, 'the sandbox thread was never replaced');
    } finally {
      await pool.close();
    }
  });
}

test.run();
