/**
 * A call's wall-clock limit holds from outside its sandbox thread. The plan here allows 20 s of
 * CPU, so neither the CPU budget nor the watchdog's stretch limit stops guest code that never
 * yields; the worker's own timer cannot fire while it runs. The main thread ends the thread at the
 * wall-clock limit plus a small margin: the call answers runtime_error, and another app's call
 * placed on that same thread (one worker here) moves to a fresh one and is answered.
 */
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WALL_MARGIN_MS } from '../../src/sandbox/watchdog.ts';
import { eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const WALL_MS = 1500;
const h = await createHarness({
  PLATFORM_SANDBOX_WORKERS: '1',
  PLATFORM_SANDBOX_WALL_MS: String(WALL_MS),
  PLATFORM_PLANS_FILE: path.resolve('test/fixtures/plans-long-cpu.json'),
});
const u = await newUser(h);
const runaway = await publishServerApp(
  h,
  u.api_key,
  `export default { fetch(req) {
    const p = new URL(req.url).pathname;
    if (p === '/loop') { for (;;) {} }
    if (p === '/regex') { return new Response(String(/^(a+)+$/.test('a'.repeat(40) + 'b'))); }
    return new Response('ok');
  } };`,
  { index: null },
);
const bystander = await publishServerApp(
  h,
  u.api_key,
  'export default { fetch() { return new Response("bystander served") } };',
  { index: null },
);
/** Generous for a loaded 2-core machine; without the main thread's check these calls take 20 s. */
const BOUND_MS = WALL_MS + WALL_MARGIN_MS + 1500;
const seen: string[] = [];

async function timed(host: string, p: string) {
  const began = performance.now();
  const r = await h.call('GET', p, { host });
  const ms = performance.now() - began;
  seen.push(`${p} on ${host.split('.')[0]}: ${Math.round(ms)} ms`);
  return { r, ms };
}

for (const p of ['/loop', '/regex']) {
  test(`${p}: guest code that never yields ends at the wall-clock limit; another app on its thread is answered`, async () => {
    await timed(runaway.host, '/ok'); // warm: both apps on the one worker
    await timed(bystander.host, '/');
    const [bad, other] = await Promise.all([
      timed(runaway.host, p),
      new Promise((r) => setTimeout(r, 100)).then(() => timed(bystander.host, '/')),
    ]);
    assert.is(bad.r.status, 500, bad.r.text);
    assert.is(bad.r.body.error.code, 'runtime_error');
    assert.ok(bad.ms < BOUND_MS, `${p} lasted ${Math.round(bad.ms)} ms (limit ${WALL_MS} ms)`);
    assert.is(other.r.status, 200, other.r.text);
    assert.is(other.r.text, 'bystander served');
    assert.ok(other.ms < BOUND_MS, `the bystander waited ${Math.round(other.ms)} ms`);
    const events = await waitFor(async () => {
      const e = await eventsOf(h, u.api_key, runaway.appId, 'runtime.request_error');
      return e.length ? e : undefined;
    });
    assert.match(String(events[0]!.metadata.error ?? events[0]!.message), /wall-clock limit/);
    assert.is((await timed(runaway.host, '/ok')).r.text, 'ok', 'the app serves again');
  });
}

test.after(async () => {
  if (process.env.TEST_VERBOSE) console.log(`calls: ${seen.join('; ')}`);
  await h.close();
});
test.run();
