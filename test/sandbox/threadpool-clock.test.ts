/**
 * The clock crypto.subtle's operations are billed by (src/sandbox/threadpool-clock.ts): the CPU
 * time of libuv's thread pool, where Node's Web Crypto computes. It moves when an operation
 * computes and stays still while other threads (guest code, the main thread) keep the cores busy,
 * so a loaded machine no longer makes an app's crypto dearer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { webcrypto } from 'node:crypto';
import { onDeno } from '../../src/lib/on-deno.ts';
import { threadPoolCpuMs } from '../../src/sandbox/threadpool-clock.ts';

const linux = process.platform === 'linux' && !onDeno;
/** libuv names its pool's threads from 1.50 (Node 24 has it, Node 20 not: there the wall clock bills). */
const named = linux && Number(process.versions.node.split('.')[0]) >= 24;

async function pbkdf2(iterations: number): Promise<void> {
  const key = await webcrypto.subtle.importKey('raw', new Uint8Array(16), 'PBKDF2', false, [
    'deriveBits',
  ]);
  await webcrypto.subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(16), iterations },
    key,
    256,
  );
}

test('it moves by what an operation computes, never more than its wall-clock time', async () => {
  await pbkdf2(1); // the pool's threads start at its first use
  const before = threadPoolCpuMs();
  if (!named) return; // no thread names to find the pool by: the wall clock bills there
  assert.ok(before !== undefined, 'the pool threads are found');
  const started = performance.now();
  await pbkdf2(300_000);
  const wall = performance.now() - started;
  const used = threadPoolCpuMs()! - before!;
  assert.ok(used > 0, `PBKDF2 at 300,000 iterations computed on the pool (${used} ms)`);
  assert.ok(used <= wall + 10, `no more than its wall-clock time (${used} of ${wall} ms)`);
});

test('it stays still while another thread keeps a core busy', async () => {
  if (!named) return;
  await pbkdf2(1);
  const before = threadPoolCpuMs()!;
  const until = performance.now() + 200;
  let spins = 0;
  while (performance.now() < until) spins++;
  const used = threadPoolCpuMs()! - before;
  assert.ok(spins > 0);
  assert.ok(used < 5, `the idle pool used ${used} ms while the main thread spun for 200 ms`);
});

test('where the threads have no names, there is no clock (and the wall clock bills)', async () => {
  if (named || !linux) return;
  await pbkdf2(1);
  assert.is(threadPoolCpuMs(), undefined);
});

test.run();
