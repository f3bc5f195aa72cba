/**
 * One tenant cannot starve the shared database. A flooding app makes three concurrent requests,
 * each issuing 1,000 `ctx.data` reads at once (the per-call cap); meanwhile another app's visitor
 * reads one row per request and `/healthz` checks the database. The flooder's calls share a
 * bounded part of the pool, queued fairly; the platform keeps a reserve: the victim's p99 stays
 * low and health stays `db: ok`. The figures are printed with TEST_VERBOSE.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DbShares, shareLimits } from '../../src/db/fair-share.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const flooder = await newUser(h, 'flooder');
const victim = await newUser(h, 'victim');
const NOTES = { data: { collections: { notes: { fields: { title: 'string' } } } } };
const SERVER = `export default { async fetch(req, ctx) {
  const notes = ctx.data.collection('notes');
  const p = new URL(req.url).pathname;
  if (p === '/seed') return Response.json(await notes.create({ title: 'row' }));
  const id = new URL(req.url).searchParams.get('id');
  if (p === '/flood') {
    const all = await Promise.allSettled(Array.from({ length: 1000 }, () => notes.get(id)));
    return Response.json({ ok: all.filter((r) => r.status === 'fulfilled').length, failed: all.filter((r) => r.status === 'rejected').map((r) => r.reason.code).slice(0, 3) });
  }
  return Response.json(await notes.get(id));
} };`;
const flood = await publishServerApp(h, flooder.api_key, SERVER, { index: null, resources: NOTES });
const calm = await publishServerApp(h, victim.api_key, SERVER, { index: null, resources: NOTES });
const floodRow = (await h.call('POST', '/seed', { host: flood.host })).body.id as string;
const calmRow = (await h.call('POST', '/seed', { host: calm.host })).body.id as string;

const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

test("a flooding app's reads do not starve another app or the platform's health check", async () => {
  let flooding = true;
  const victimMs: number[] = [];
  const healthMs: number[] = [];
  const health: string[] = [];
  // rounds of three concurrent floods, until the victim has made its requests (at most 10 rounds)
  const answers: Awaited<ReturnType<typeof h.call>>[] = [];
  const floods = (async () => {
    for (let round = 0; round < 10 && (round < 2 || victimMs.length < 40); round++)
      answers.push(
        ...(await Promise.all(
          [0, 1, 2].map(() => h.call('GET', `/flood?id=${floodRow}`, { host: flood.host })),
        )),
      );
  })().finally(() => (flooding = false));
  const victimLoop = (async () => {
    while (flooding) {
      const began = performance.now();
      const r = await h.call('GET', `/?id=${calmRow}`, { host: calm.host });
      victimMs.push(performance.now() - began);
      assert.is(r.status, 200, r.text);
    }
  })();
  const healthLoop = (async () => {
    while (flooding) {
      const began = performance.now();
      const r = await h.call('GET', '/healthz');
      healthMs.push(performance.now() - began);
      health.push(r.body.db);
    }
  })();
  await Promise.all([floods, victimLoop, healthLoop]);
  for (const a of answers) {
    assert.is(a.status, 200, a.text);
    assert.is(a.body.ok, 1000, `every read of the flood is served in its turn: ${a.text}`);
  }
  if (process.env.TEST_VERBOSE)
    console.log(
      `victim: ${victimMs.length} requests, p50 ${Math.round(victimMs.sort((a, b) => a - b)[victimMs.length >> 1]!)} ms, p99 ${Math.round(p99(victimMs))} ms; health p99 ${Math.round(p99(healthMs))} ms`,
    );
  assert.ok(victimMs.length >= 5, 'the victim was served while the flood ran');
  assert.ok(!health.includes('unavailable'), `health said ${health.join(',')}`);
  assert.ok(p99(victimMs) < 400, `the victim's p99 was ${Math.round(p99(victimMs))} ms`);
});

test('the shares: a reserve for the platform, half for one app, turns in rotation, a wait bounded by the call', async () => {
  assert.equal(shareLimits(20), { reserve: 4, capacity: 16, perApp: 8, perAccount: 12 });
  assert.equal(shareLimits(10), { reserve: 2, capacity: 8, perApp: 4, perAccount: 6 });
  const s = new DbShares({ reserve: 1, capacity: 3, perApp: 2, perAccount: 3 });
  const far = performance.now() + 10_000;
  const a1 = await s.acquire('a', 'acct1', far);
  await s.acquire('a', 'acct1', far);
  const order: string[] = [];
  const later = (app: string, account: string) =>
    s.acquire(app, account, far).then((done) => (order.push(app), done));
  const a3 = later('a', 'acct1'); // over a's half: waits
  const b1 = await s.acquire('b', 'acct2', far); // another app gets the last turn at once
  const waits = [a3, later('b', 'acct2'), later('c', 'acct3'), later('a', 'acct1')];
  assert.is(s.waiting(), 4);
  a1();
  await new Promise((r) => setImmediate(r));
  b1();
  await new Promise((r) => setImmediate(r));
  assert.equal(order, ['a', 'b'], 'freed turns go round the waiting apps');
  const refused = await s.acquire('d', 'acct4', performance.now() + 30).catch((e) => e);
  assert.is(refused.code, 'service_unavailable');
  assert.match(refused.message, /until the end of the call's time/);
  for (const w of waits.slice(0, 2)) (await w)();
  await Promise.all(waits.slice(2).map(async (w) => (await w)()));
  assert.equal(order, ['a', 'b', 'c', 'a']);
});

test.after(() => h.close());
test.run();
