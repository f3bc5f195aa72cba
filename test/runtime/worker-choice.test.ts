/**
 * Which sandbox worker takes a call: small calls stay packed on their release's warm worker (one
 * thread awake instead of two), and a call that would wait behind a long one there goes to another.
 * Observed as an app sees it: which instance's state answers, and the order answers come back in
 * (the throughput this buys is in `npm run bench:origin`).
 */
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { waitFor } from '../_lib/apps.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const limits = {
  cpuMs: 5000,
  ...DEFAULT_INSTANCE_LIMITS,
  wallMs: 10_000,
};
const pool = new SandboxPool({ workers: 2, limits, hardKillMs: 8000 });
await pool.warm();

// Each instance counts its own calls; /wait waits 1 s on a timer; /spin runs ~2 s of CPU here (a fixed amount of work, not a clock).
const APP = `let n = 0;
export default { async fetch(req) {
  const path = new URL(req.url).pathname;
  if (path === '/spin') { let x = 0; for (let i = 0; i < 3e7; i++) x += i; return new Response('spun ' + (x > 0)); }
  const seen = ++n;
  if (path === '/wait') await new Promise((r) => setTimeout(r, 1000));
  return new Response(String(seen));
} };`;

test('calls that wait on timers or fetches stay with the warm instance, however many are open', async () => {
  assert.is(answerText(await invokeSource(pool, 'rel_waits', APP)), '1');
  // The cold start took the worker's spare instance; making the next one keeps the worker busy, and
  // calls queued meanwhile rightly go elsewhere: wait until it is made.
  await waitFor(async () => pool.sparesReady());
  // sent one by one, as requests arrive, all open at once
  const calls = [];
  for (let i = 0; i < 12; i++) {
    calls.push(invokeSource(pool, 'rel_waits', APP, '/wait'));
    await new Promise((r) => setTimeout(r, 10));
  }
  const counts = (await Promise.all(calls)).map((a) => Number(answerText(a))).sort((a, b) => a - b);
  // one instance counted them all (an instance on the other worker would have started again from 1)
  assert.equal(
    counts,
    Array.from({ length: 12 }, (_, i) => i + 2),
  );
});

test('a call does not wait behind a long call on its warm worker while another worker is free', async () => {
  assert.is(answerText(await invokeSource(pool, 'rel_long', APP)), '1');
  const order: string[] = [];
  await waitFor(async () => pool.sparesReady());
  const spin = invokeSource(pool, 'rel_long', APP, '/spin').then((r) => (order.push('spin'), r));
  await waitFor(async () => pool.guestCodeRunning()); // the long call is running
  const quick = await invokeSource(pool, 'rel_long', APP).then((r) => (order.push('quick'), r));
  // it was answered by a fresh instance on the other worker, while the long call still ran
  assert.is(answerText(quick), '1');
  assert.is(answerText(await spin), 'spun true');
  assert.equal(order, ['quick', 'spin']);
});

test.after(() => pool.close());
test.run();
