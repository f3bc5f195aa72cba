/**
 * The pool's watchdog, run on the main thread every few tens of milliseconds: which worker's guest
 * code must be ended because its own thread cannot end it.
 */
import { taskCpuMs } from './cpu-clock.ts';
import type { Slot } from './pool-slot.ts';
import type { InvocationResult } from './protocol.ts';
import { RUNNING_ID, RUNNING_SINCE, THREAD_ID } from './shared-state.ts';
import { TIME_ORIGIN } from './protocol.ts';

/**
 * How far past its wall-clock limit a call's guest code may still be running before the main thread
 * ends its worker. The worker's own timer ends a call at the limit whenever the guest yields; this is
 * for guest code that does not (a loop on a starved core, a long native operation), which that timer,
 * on the same thread, cannot interrupt.
 */
export const WALL_MARGIN_MS = 250;

/**
 * Whether `slot`'s running stretch of guest code must end its worker, and why:
 * - its call is `WALL_MARGIN_MS` past its wall-clock limit;
 * - or the stretch has run without yielding longer than the call's `killAfterMs` (at most
 *   `hardKillMs`) of the thread's CPU time (where it can be read), so a busy host does not kill a
 *   worker whose guest only waited for a core. A stretch is first seen by a check up to 100 ms
 *   after it began; the time before that is counted as if all of it had been CPU. Where the
 *   thread's CPU time cannot be read, wall-clock time decides.
 */
export function overdueStretch(
  slot: Slot,
  hardKillMs: number,
): { reason: string; error: NonNullable<InvocationResult['error']> } | undefined {
  if (!slot.alive) return undefined;
  const since = slot.state[RUNNING_SINCE]!;
  if (!since) return undefined;
  const wallNow = performance.now();
  const now = TIME_ORIGIN + wallNow; // the clock of RUNNING_SINCE
  const running = slot.pending.get(slot.state[RUNNING_ID]!);
  if (running && wallNow > running.deadline + WALL_MARGIN_MS)
    // its own thread cannot stop it: the call ends here, and the others on that thread move
    return {
      reason: 'wall-clock limit: guest code still running',
      error: {
        kind: 'timeout',
        message: `wall-clock limit reached: guest code was still running after ${running.wallMs} ms; its worker was terminated`,
      },
    };
  if (slot.watched?.since !== since)
    slot.watched = { since, seenAt: now, cpuMs: taskCpuMs(slot.state[THREAD_ID]!) };
  const limit = running?.killAfterMs ?? hardKillMs;
  if (now - since <= limit) return undefined;
  const { seenAt, cpuMs } = slot.watched;
  const cpuNow = cpuMs === undefined ? undefined : taskCpuMs(slot.state[THREAD_ID]!);
  // before it was seen, it may have used every millisecond of the wall clock
  const ranMs = cpuNow === undefined ? now - since : cpuNow - cpuMs! + (seenAt - since);
  if (ranMs <= limit) return undefined;
  return {
    reason: 'watchdog: guest did not yield',
    error: {
      kind: 'timeout',
      message: `guest code ran for more than ${Math.round(limit)} ms without yielding; its worker was terminated`,
    },
  };
}
