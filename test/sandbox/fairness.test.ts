/**
 * The pool's CPU fairness as bookkeeping, without threads: how many calls a release may have in
 * flight (fewer the more CPU its calls use), who waits, who is handed a place, and who is refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { capOf, FAIRNESS, FairQueues } from '../../src/sandbox/fairness.ts';

test('a release may have fewer calls in flight the more CPU its calls use, within bounds per worker', () => {
  assert.is(capOf(0, 2), FAIRNESS.unmeasuredPerWorker * 2, 'not measured yet');
  assert.is(capOf(0.1, 2), FAIRNESS.maxPerWorker * 2, 'light calls: the most');
  assert.is(capOf(10, 2), 20, '100 ms of queued CPU per worker');
  assert.is(capOf(500, 2), FAIRNESS.minPerWorker * 2, 'heavy calls: the fewest');
  assert.is(capOf(10, 1) * 2, capOf(10, 2), 'in proportion to the workers');
});

test('past its cap a call waits, and a finishing call of its release hands it the place', async () => {
  const fair = new FairQueues();
  const first = await fair.enter('rel', 1, 10_000);
  assert.equal(first, {});
  fair.leave('rel', 1, 60); // measured: 60 ms a call, so 2 in flight on one worker
  assert.equal(await fair.enter('rel', 1, 10_000), {});
  assert.equal(await fair.enter('rel', 1, 10_000), {});
  let third: { queuedMs?: number; refused?: string } | undefined;
  const waiting = fair.enter('rel', 1, 10_000).then((t) => (third = t));
  await Promise.resolve();
  assert.is(fair.waiting(), 1);
  assert.is(third, undefined, 'it waits');
  // another release is not held up by this one's queue
  assert.equal(await fair.enter('other', 1, 10_000), {});
  fair.leave('rel', 1, 60);
  await waiting;
  assert.is(third?.refused, undefined);
  assert.ok(third!.queuedMs! >= 0);
  assert.is(fair.waiting(), 0);
});

test('a call that waits past its wall-clock limit is refused; so is one that finds the queue full', async () => {
  const fair = new FairQueues();
  await fair.enter('slow', 1, 10_000);
  fair.leave('slow', 1, 1000); // the fewest in flight: 2
  await fair.enter('slow', 1, 10_000);
  await fair.enter('slow', 1, 10_000);
  const timedOut = await fair.enter('slow', 1, 20);
  assert.match(timedOut.refused ?? '', 'waited 20 ms');
  assert.ok(timedOut.queuedMs! >= 19);
  assert.is(fair.waiting(), 0, 'it left the queue');
  const held = Array.from({ length: FAIRNESS.maxQueued }, () => fair.enter('slow', 1, 60_000));
  const full = await fair.enter('slow', 1, 60_000);
  assert.match(
    full.refused ?? '',
    `${FAIRNESS.maxQueued} calls of this release are already waiting`,
  );
  assert.is(full.queuedMs, undefined, 'refused without waiting');
  // let the held calls through, one place at a time
  for (let i = 0; i < FAIRNESS.maxQueued; i++) fair.leave('slow', 1, 1000);
  for (const turn of await Promise.all(held)) assert.is(turn.refused, undefined);
});

test.run();
