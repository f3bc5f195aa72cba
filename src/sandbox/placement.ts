/**
 * Which shared worker a release's call goes to: pure, from what each worker's shared state and the
 * pool's own counts say (no thread is touched here, so it is tested without any).
 */
import { BEGUN_COUNT, RUNNING_SINCE, SPARE_READY } from './shared-state.ts';

/** What placement reads of a worker. */
export type Placed = {
  /** the worker's shared state (shared-state.ts names its slots) */
  state: ArrayLike<number>;
  /** releases the worker has been sent sources for */
  loaded: { has(releaseId: string): boolean };
  /** invocations sent to it; `state[BEGUN_COUNT]` counts those it began */
  sent: number;
  /** the CPU its recent calls took, ms (a moving average) */
  callMs: number;
  /** calls sent with sources and not answered yet: each may take the worker's spare */
  coldInFlight: number;
};

/**
 * How much longer than on another worker a call may expect to wait on its release's warm worker
 * before it goes to the other. Small calls are packed onto one thread until its queue holds about
 * this much work: every thread woken for a call costs CPU of its own (measured by bench:origin;
 * docs/decisions/sandbox.md).
 */
export const SPILL_MS = 1;
/** What a call costs its worker besides its guest CPU (receiving it, answering), ms. */
export const CALL_OVERHEAD_MS = 0.02;

/**
 * The work ahead of a call sent to a worker now, ms: the stretch of guest code running there (a
 * long call holds every call behind it) and the calls it has not begun, each at its recent average.
 * Calls it began that wait for a timer or a fetch hold nothing up.
 */
export function backlogMs(slot: Placed, now: number): number {
  const since = slot.state[RUNNING_SINCE]!;
  const running = since ? now - since : 0;
  return running + (slot.sent - slot.state[BEGUN_COUNT]!) * (slot.callMs + CALL_OVERHEAD_MS);
}

/** Whether a release new to this worker would find a blank instance waiting. */
export const spareReady = (slot: Placed): boolean =>
  slot.state[SPARE_READY] === 1 && slot.coldInFlight === 0;

/** FNV-1a: a release's home worker, the same on every node. */
export function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The worker for a call of `releaseId` among `slots` (at least one) at time `now` (the clock of
 * `RUNNING_SINCE`): where the release is warm; else, for a release new to every worker, one whose
 * spare is ready (a cold start there skips compiling the prelude); else its hashed worker. It stays
 * on that worker unless a call would wait clearly longer there than on another.
 */
export function chooseWorker<S extends Placed>(
  slots: readonly S[],
  releaseId: string,
  now: number,
): S {
  let preferred = slots.find((s) => s.loaded.has(releaseId));
  if (!preferred) {
    const hashed = slots[hashString(releaseId) % slots.length]!;
    preferred = spareReady(hashed) ? hashed : (slots.find(spareReady) ?? hashed);
  }
  const preferredMs = backlogMs(preferred, now);
  let least = preferred;
  let leastMs = preferredMs;
  for (const s of slots) {
    if (s === preferred) continue;
    const ms = backlogMs(s, now);
    if (ms < leastMs) (least = s), (leastMs = ms);
  }
  return preferredMs > leastMs + SPILL_MS ? least : preferred;
}
