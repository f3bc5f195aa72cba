/**
 * CPU fairness on one shared sandbox worker: a burst of CPU-heavy calls to one app does not make
 * another app's call wait behind all of them (asserted by completion order, not by timings: the
 * figures are in `npm run bench:fairness`), and the heavy app's own excess gets a 503 with
 * Retry-After rather than an unbounded queue.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { setPlan } from '../../src/plans/operator.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '1', PLATFORM_SANDBOX_WALL_MS: '3000' });
const u = await newUser(h);
// Business: 200 ms of CPU per call, far above what the heavy app uses on any machine
await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' });

const publish = async (source: string) => (await publishServerApp(h, u.api_key, source)).host;

// ~35 ms of CPU per call on these machines: a fixed amount of work, since CPU time is what is billed
// (a busy wait on the clock uses less CPU when other test files share the cores)
const heavy = await publish(
  `export default { fetch() { let n = 0; for (let i = 0; i < 400000; i++) n += i; return new Response('heavy ' + n); } };`,
);
const light = await publish(`export default { fetch() { return new Response('light'); } };`);

test("a light app's call is not queued behind a heavy app's burst on the same worker", async () => {
  for (let i = 0; i < 3; i++) assert.is((await h.call('GET', '/', { host: heavy })).status, 200); // its CPU use is known
  const done: string[] = [];
  const calls = Array.from({ length: 40 }, (_, i) =>
    h.call('GET', `/h${i}`, { host: heavy }).then((r) => (done.push('heavy'), r)),
  );
  await new Promise((r) => setTimeout(r, 10));
  const lightCall = h.call('GET', '/l', { host: light }).then((r) => (done.push('light'), r));
  const [answers, lightAnswer] = await Promise.all([Promise.all(calls), lightCall]);
  assert.is(lightAnswer.status, 200);
  assert.ok(
    answers.every((a) => a.status === 200),
    'the heavy burst is served too (it waits its turn)',
  );
  const rank = done.indexOf('light');
  assert.ok(
    rank <= 8,
    `the light call finished after ${rank} of 40 heavy calls (FIFO would put it after all 40)`,
  );
});

test("a heavy app's excess beyond its queue gets 503 with Retry-After, and the light app still answers", async () => {
  const answers = await Promise.all([
    ...Array.from({ length: 400 }, (_, i) => h.call('GET', `/x${i}`, { host: heavy })),
    new Promise((r) => setTimeout(r, 20)).then(() => h.call('GET', '/l', { host: light })),
  ]);
  const lightAnswer = answers.pop()!;
  assert.is(lightAnswer.status, 200);
  const refused = answers.filter((a) => a.status === 503);
  assert.ok(refused.length > 0, 'some of the heavy burst was refused');
  assert.ok(
    refused.every(
      (a) => a.headers.get('retry-after') === '1' && a.body.error.code === 'runtime_error',
    ),
  );
  assert.ok(
    answers.some((a) => a.status === 200),
    'and some of it served',
  );
});

test.after(() => h.close());
test.run();
