/**
 * The per-instance memory cap against apps that keep memory in ways the cheap path could miss:
 * calls that keep a little and then throw, and many cheap calls that keep a little each inside WASM
 * memory that has already grown (so no growth prompts a measure). One sandbox worker with a 16 MiB
 * instance cap, so every app here shares that worker's memory.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, newUser } from '../_lib/harness.ts';
import { eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';

const h = await createHarness({
  PLATFORM_SANDBOX_WORKERS: '1',
  PLATFORM_SANDBOX_MEMORY_MB: '16',
  PLATFORM_SANDBOX_WORKER_MEMORY_MB: '512',
});
const u = await newUser(h);
const key = u.api_key;
const MiB = 2 ** 20;

const SOURCE = `export default { fetch(req) {
  const p = new URL(req.url).pathname;
  const kept = (globalThis.kept ??= []);
  // keeps 2 MiB, then fails the call as an app bug would
  if (p === '/keep-then-throw') { kept.push(new Uint8Array(2 * ${MiB}).fill(1)); throw new Error('failed after keeping ' + kept.length * 2 + ' MiB'); }
  // keeps 2 MiB in a cheap call (well under a millisecond of CPU)
  if (p === '/keep') { kept.push(new Uint8Array(2 * ${MiB})); return new Response(String(kept.length * 2)); }
  // uses 200 MiB within the call and lets it all go: the worker's WASM memory stays grown, and free
  if (p === '/transient') { let t = []; for (let i = 0; i < 100; i++) t.push(new Uint8Array(2 * ${MiB})); t = null; return new Response('let go'); }
  return new Response('kept ' + kept.length * 2 + ' MiB');
} };`;

const cheap = await publishServerApp(h, key, SOURCE);
const thrower = await publishServerApp(h, key, SOURCE);
const bystander = await publishServerApp(
  h,
  key,
  `export default { fetch() { globalThis.n = (globalThis.n ?? 0) + 1; return new Response(String(globalThis.n)); } };`,
);

test('memory kept by calls that then throw counts against the cap: the call that crosses it says so, the next gets a fresh instance', async () => {
  assert.is((await h.call('GET', '/n', { host: bystander.host })).text, '1');
  // 12 calls keep 24 MiB under a 16 MiB cap, each ending in the app's own exception
  for (let i = 0; i < 12; i++) {
    const r = await h.call('GET', '/keep-then-throw', { host: thrower.host });
    assert.is(r.status, 500, r.text);
    assert.is(r.body.error.code, 'runtime_error');
  }
  const memory = await waitFor(async () =>
    (await eventsOf(h, key, thrower.appId, 'runtime.request_error')).find(
      (e) => e.metadata.kind === 'memory',
    ),
  );
  assert.match(
    String(memory.metadata.error),
    /^memory limit exceeded: [\d.]+ MiB in use, the limit is 16\.0 MiB$/,
  );
  // a fresh instance took over after that call, so it keeps less than the cap (the old one would hold 24 MiB)
  const now = Number(
    /^kept (\d+) MiB$/.exec((await h.call('GET', '/state', { host: thrower.host })).text)?.[1],
  );
  assert.ok(now < 16, `the instance now keeps ${now} MiB`);
  // the worker was not replaced: the bystander's warm instance counts on
  assert.is((await h.call('GET', '/n', { host: bystander.host })).text, '2');
});

test('many cheap calls that each keep a little, in WASM memory already grown, are stopped near the cap', async () => {
  assert.is((await h.call('GET', '/transient', { host: cheap.host })).text, 'let go');
  const answers: string[] = [];
  let failed: Awaited<ReturnType<typeof h.call>> | undefined;
  for (let i = 0; i < 40 && !failed; i++) {
    const r = await h.call('GET', '/keep', { host: cheap.host });
    if (r.status === 200) answers.push(r.text);
    else failed = r;
  }
  assert.ok(failed, `never stopped: kept ${answers.at(-1)} MiB`);
  assert.is(failed.body.error.code, 'runtime_error');
  const kept = Number(answers.at(-1) ?? 0);
  // Memory is measured after every 2 ms of CPU billed, and a call here zeroes 2 MiB in far less than
  // that: the cap is seen some calls late, never dozens (measuring every 32nd call would let it double).
  assert.ok(kept >= 14 && kept <= 44, `stopped with ${kept} MiB kept under a 16 MiB cap`);
  const events = await eventsOf(h, key, cheap.appId, 'runtime.request_error');
  assert.ok(
    events.some((e) => e.metadata.kind === 'memory'),
    JSON.stringify(events.slice(0, 2)),
  );
  assert.is((await h.call('GET', '/state', { host: cheap.host })).text, 'kept 0 MiB');
});

test.after(() => h.close());
test.run();
