/**
 * One app's crash is not another app's visitor's problem, under concurrent load on one sandbox
 * worker (the worst case: every app shares it). A stack overflow in guest code ends only that
 * instance; a call that kills the worker (the watchdog) has the calls beside it run again on a fresh
 * one; a release that keeps killing workers is quarantined on a worker of its own.
 */
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/logger.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser, SHORT_CPU_PLANS } from '../_lib/harness.ts';

const h = await createHarness({
  PLATFORM_SANDBOX_WORKERS: '1',
  PLATFORM_PLANS_FILE: SHORT_CPU_PLANS,
});
const lines: string[] = [];
h.deps.log = createLogger('warn', (line) => lines.push(line));
const u = await newUser(h);

const publish = (source: string, resources?: Record<string, unknown>) =>
  publishServerApp(h, u.api_key, source, { resources });

const culprit = await publish(`export default {
  async fetch(req) {
    const p = new URL(req.url).pathname;
    if (p === '/json') { const v = await req.json(); return new Response('parsed ' + typeof v); }
    // one native operation the interrupt handler never sees (on either engine): the watchdog
    // terminates the whole worker
    if (p === '/bomb') return new Response(String(Array.prototype.reverse.call({ length: 1e9 })));
    return new Response('culprit ok');
  },
};`);
// parked on a timer while the culprit runs: begun, not finished, and it changes nothing
const victim = await publish(`export default {
  async fetch(req) {
    const ms = Number(new URL(req.url).searchParams.get('ms') ?? 0);
    await new Promise((r) => setTimeout(r, ms));
    return new Response('victim ok');
  },
};`);

// writes, then waits: once it has changed something it must never run twice
const writer = await publish(
  `export default {
  async fetch(req, ctx) {
    await ctx.data.collection('notes').create({ title: 'once' });
    await new Promise((r) => setTimeout(r, 400));
    return new Response('wrote');
  },
};`,
  { data: { collections: { notes: { fields: { title: 'string' } } } } },
);

const replaced = () => lines.filter((l) => l.includes('sandbox worker replaced')).length;
const victims = (n: number, ms: number) =>
  Array.from({ length: n }, () => h.call('GET', `/v?ms=${ms}`, { host: victim.host }));
const later = <T>(ms: number, fn: () => Promise<T>) =>
  new Promise<T>((r) => setTimeout(() => r(fn()), ms));

test('JSON nested 500,000 deep ends that request only: no worker is replaced, requests to other apps all succeed', async () => {
  const before = replaced();
  const deep = '['.repeat(500_000) + ']'.repeat(500_000);
  const answers = await Promise.all([
    ...victims(12, 300),
    ...[50, 100, 150].map((ms) =>
      later(ms, () =>
        h.call('POST', '/json', {
          host: culprit.host,
          rawBody: deep,
          headers: { 'content-type': 'application/json' },
        }),
      ),
    ),
  ]);
  const victimAnswers = answers.slice(0, 12);
  assert.equal(
    victimAnswers.map((a) => a.status),
    Array(12).fill(200),
    'every victim request was served',
  );
  for (const a of answers.slice(12))
    assert.is(a.status, 500, 'the deep request is a runtime_error');
  console.log(lines.filter((l) => l.includes('replaced')));
  assert.is(replaced(), before, 'a guest stack overflow does not replace the worker');
  assert.is(
    (await h.call('GET', '/ok', { host: culprit.host })).text,
    'culprit ok',
    'the culprit app itself keeps serving',
  );
});

test('a call that kills the shared worker: the calls beside it run again, no visitor of another app sees it', async () => {
  const before = replaced();
  const answers = await Promise.all([
    ...victims(12, 400),
    later(100, () => h.call('GET', '/bomb', { host: culprit.host })),
  ]);
  assert.ok(replaced() > before, 'the worker was replaced');
  assert.equal(
    answers.slice(0, 12).map((a) => a.status),
    Array(12).fill(200),
    'every victim request was served',
  );
  assert.is(answers[12]!.status, 500);
});

test('a call beside the crash that had already written is not run again (it fails; the write happened once)', async () => {
  const [wrote] = await Promise.all([
    h.call('GET', '/w', { host: writer.host }),
    later(150, () => h.call('GET', '/bomb', { host: culprit.host })),
  ]);
  assert.is(wrote.status, 500, 'not retried: it had changed something');
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from app_rows where app_id = ${writer.appId}`.execute(h.deps.db);
  assert.is(rows[0]!.n, 1, 'written exactly once');
});

test('a release that keeps killing workers is quarantined on a worker of its own, with an event; others are unaffected', async () => {
  // the bombs above were two kills in this minute; one more makes three
  for (let i = 0; i < 1; i++) {
    const answers = await Promise.all([
      ...victims(6, 300),
      later(50, () => h.call('GET', '/bomb', { host: culprit.host })),
    ]);
    assert.equal(
      answers.slice(0, 6).map((a) => a.status),
      Array(6).fill(200),
    );
  }
  const { rows } = await sql<{
    metadata: { kind: string; mode: string };
  }>`select metadata from app_events where app_id = ${culprit.appId} and type = 'runtime.request_error' and metadata->>'kind' = 'quarantined'`.execute(
    h.deps.db,
  );
  assert.is(rows.length, 1, 'one event says the release was quarantined');
  assert.is(rows[0]!.metadata.mode, 'own_worker');
  // from now on its crashes replace only its own worker
  const answers = await Promise.all([
    ...victims(12, 300),
    later(50, () => h.call('GET', '/bomb', { host: culprit.host })),
  ]);
  assert.equal(
    answers.slice(0, 12).map((a) => a.status),
    Array(12).fill(200),
  );
  assert.is(
    (await h.call('GET', '/ok', { host: culprit.host })).text,
    'culprit ok',
    'and it keeps serving',
  );
});

test.after(() => h.close());
test.run();
