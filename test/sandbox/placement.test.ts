/**
 * Which worker a call goes to, and the quarantine of releases that keep killing theirs: the pool's
 * pure decisions, checked without threads (the runtime suite checks them with real workers).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  backlogMs,
  chooseWorker,
  hashString,
  type Placed,
  SPILL_MS,
} from '../../src/sandbox/placement.ts';
import { QUARANTINE, QuarantineBook } from '../../src/sandbox/quarantine.ts';
import { BEGUN_COUNT, RUNNING_SINCE, SPARE_READY } from '../../src/sandbox/shared-state.ts';

type Fake = Placed & { name: string };
function worker(
  name: string,
  o: {
    loaded?: string[];
    queued?: number;
    callMs?: number;
    runningFor?: number;
    spare?: boolean;
  } = {},
  now = 1_000_000,
): Fake {
  const state = new Float64Array(8);
  state[RUNNING_SINCE] = o.runningFor ? now - o.runningFor : 0;
  state[BEGUN_COUNT] = 10;
  state[SPARE_READY] = o.spare ? 1 : 0;
  return {
    name,
    state,
    loaded: new Set(o.loaded ?? []),
    sent: 10 + (o.queued ?? 0),
    callMs: o.callMs ?? 0.1,
    coldInFlight: 0,
  };
}
const NOW = 1_000_000;

test('the work ahead of a call: the running stretch and the queued calls at their average', () => {
  assert.is(backlogMs(worker('a'), NOW), 0);
  assert.ok(Math.abs(backlogMs(worker('a', { queued: 4, callMs: 2 }), NOW) - 4 * 2.02) < 1e-9);
  assert.is(backlogMs(worker('a', { runningFor: 30 }), NOW), 30);
});

test('a warm worker keeps its release unless another is clearly less busy', () => {
  const warm = worker('warm', { loaded: ['rel_a'], queued: 2, callMs: 0.2 });
  const idle = worker('idle');
  assert.is(chooseWorker([idle, warm], 'rel_a', NOW).name, 'warm', 'a little queue: stay warm');
  const busy = worker('busy', { loaded: ['rel_a'], runningFor: SPILL_MS + 5 });
  assert.is(
    chooseWorker([busy, idle], 'rel_a', NOW).name,
    'idle',
    'stuck behind a long call: spill',
  );
});

test('a release new to every worker: a ready spare, else its hashed worker', () => {
  const slots = [worker('w0'), worker('w1'), worker('w2')];
  const home = slots[hashString('rel_new') % slots.length]!;
  assert.is(chooseWorker(slots, 'rel_new', NOW).name, home.name);
  const other = slots.find((s) => s !== home)!;
  const withSpare = slots.map((s) => (s === other ? worker(s.name, { spare: true }) : s));
  const spare = withSpare.find((s) => s.name === other.name)!;
  assert.is(chooseWorker(withSpare, 'rel_new', NOW).name, spare.name, 'the ready spare wins');
  assert.is(hashString('rel_new'), hashString('rel_new'), 'the same home on every node');
});

test('quarantine: the third kill within a minute gives a worker of its own, then refusal', () => {
  const book = new QuarantineBook<string>();
  let made = 0;
  const own = () => `own-${++made}`;
  assert.is(book.killed('rel_a', 0, own), undefined);
  assert.is(book.killed('rel_a', 1_000, own), undefined);
  assert.equal(book.killed('rel_a', 2_000, own), {
    mode: 'own_worker',
    seconds: QUARANTINE.forMs / 1000,
  });
  assert.is(book.killed('rel_a', 3_000, own), undefined, 'alone, it only hurts itself');
  // kills spread wider than the window never add up
  for (const t of [0, QUARANTINE.withinMs, 2 * QUARANTINE.withinMs])
    assert.is(book.killed('rel_slow', t, own), undefined);
  // past maxIsolated, a release is refused for the cooldown instead
  for (let i = 1; i < QUARANTINE.maxIsolated; i++)
    for (const t of [0, 1, 2]) book.killed(`rel_${i}`, t, own);
  assert.equal([0, 1, 2].map((t) => book.killed('rel_z', t, own)).at(-1), {
    mode: 'refused',
    seconds: QUARANTINE.cooldownMs / 1000,
  });
  assert.is(book.refusedFor('rel_z', 2), QUARANTINE.cooldownMs / 1000);
  assert.is(book.refusedFor('rel_z', 2 + QUARANTINE.cooldownMs), 0);
  assert.is(made, QUARANTINE.maxIsolated);
});

test('a quarantine ends once its time is over and its worker idle', () => {
  const book = new QuarantineBook<string>();
  for (const t of [0, 1, 2]) book.killed('rel_a', t, () => 'own');
  const stopped: string[] = [];
  const stop = (w: string) => stopped.push(w);
  assert.is(
    book.ownWorker('rel_a', 1_000, () => false, stop),
    'own',
  );
  const over = QUARANTINE.forMs + 10;
  assert.is(
    book.ownWorker('rel_a', over, () => true, stop),
    'own',
    'calls still there: stay',
  );
  assert.is(
    book.ownWorker('rel_a', over, () => false, stop),
    undefined,
  );
  assert.equal(stopped, ['own']);
  assert.is(book.has('rel_a'), false);
});

test.run();
