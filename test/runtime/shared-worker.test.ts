import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, newUser, SHORT_CPU_PLANS } from '../_lib/harness.ts';
import { publishServerApp } from '../_lib/apps.ts';

// One sandbox worker: every app shares it, and answers cross back in batches.
const h = await createHarness({
  PLATFORM_SANDBOX_WORKERS: '1',
  PLATFORM_PLANS_FILE: SHORT_CPU_PLANS,
});
const u = await newUser(h);
const key = u.api_key;

const serverApp = async (source: string) => (await publishServerApp(h, key, source)).host;

const innocent = await serverApp(
  `export default { fetch(req) { return new Response('innocent ' + new URL(req.url).pathname) } };`,
);
const hostile = await serverApp(`export default { fetch(req) {
  // reverse() of a huge array-like is one native operation no engine's interrupt sees: the watchdog's
  return new Response(new URL(req.url).pathname === '/boom' ? String(Array.prototype.reverse.call({ length: 1e9 })) : 'warm');
} };`);
// both instances warm, so the test's calls run at once (the bomb itself waits for the watchdog: warmed apart)
assert.is((await h.call('GET', '/warm', { host: innocent })).text, 'innocent /warm');
assert.is((await h.call('GET', '/warm', { host: hostile })).text, 'warm');

test('answers another app finished just before a guest got the worker terminated are still delivered', async () => {
  // Same turn, same worker: the innocent invocations run first, then the hostile one blocks the
  // thread inside one instruction until the watchdog terminates it.
  const calls = [1, 2, 3, 4, 5].map((i) => h.call('GET', `/n${i}`, { host: innocent }));
  const bad = h.call('GET', '/boom', { host: hostile });
  const answers = await Promise.all(calls);
  answers.forEach((a, i) => assert.is(a.text, `innocent /n${i + 1}`));
  const b = await bad;
  assert.is(b.status, 500, b.text.slice(0, 200));
  assert.is(b.body.error.code, 'runtime_error');
  // The replacement worker serves both apps again.
  assert.is((await h.call('GET', '/after', { host: innocent })).text, 'innocent /after');
});

test('many concurrent calls to one worker all get their own answer', async () => {
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) => h.call('GET', `/c${i}`, { host: innocent })),
  );
  answers.forEach((a, i) => assert.is(a.text, `innocent /c${i}`));
});

test.after(() => h.close());
test.run();
