/**
 * The CPU time the calling thread has used, in milliseconds: what a call's CPU budget is measured
 * in. Wall-clock time is not CPU time on a loaded machine: a sandbox thread that waits for a core
 * (other apps' workers, Postgres, anything else on the host) would bill that wait to the app, and a
 * 3 ms handler failed its 50 ms budget once the cores were shared six ways (measured).
 *
 * Sources, cheapest first: `process.threadCpuUsage()` (Node 23.9 and later), the first field of
 * `/proc/thread-self/schedstat` read again through one open descriptor (Linux, nanoseconds, a
 * system call), and where neither exists, wall-clock time. Callers read it
 * at a segment's edges and, in the interrupt handler, only once wall-clock time says the budget may
 * be spent (a thread's CPU time never grows faster than wall-clock time), so a call pays two reads.
 * Both sources move in scheduler ticks, so what is billed is `billedMs`: the smaller of wall-clock
 * time and CPU time plus the largest tick.
 */
import { openSync, readFileSync, readlinkSync, readSync } from 'node:fs';

export type CpuClock = {
  readonly source: 'thread-cpu-usage' | 'schedstat' | 'wall';
  now(): number;
  /** How stale a reading may be (ms): an interval read from it is off by up to this either way. See `billedMs`. */
  readonly stepMs: number;
};

/**
 * CPU time to bill for an interval that took `wallMs` on the wall clock and `cpuMs` by the clock:
 * never less than what it really used (the clock's step is added), never more than the wall clock.
 * A short interval costs its wall-clock time (exact); a long one on a busy core costs its
 * CPU time plus at most one step.
 */
export function billedMs(clock: CpuClock, wallMs: number, cpuMs: number): number {
  return Math.min(wallMs, cpuMs + clock.stepMs);
}

/**
 * Linux moves a running thread's CPU time at scheduler ticks: 1 to 10 ms apart by the kernel's HZ
 * (measured here: 4 ms steps, from every source above). The largest, so billing never falls short.
 */
export const TICK_MS = 10;

/** Whether the clock moves while this thread computes (at most a tick or two of spinning, once per thread). */
function moves(now: () => number): boolean {
  const first = now();
  const until = performance.now() + 50;
  while (performance.now() < until) if (now() !== first) return true;
  return false;
}

function threadCpuUsage(): CpuClock | undefined {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } })
    .threadCpuUsage;
  if (typeof usage !== 'function') return undefined;
  try {
    usage();
  } catch {
    return undefined;
  }
  const now = (): number => {
    const u = usage.call(process);
    return (u.user + u.system) / 1000;
  };
  return moves(now) ? { source: 'thread-cpu-usage', now, stepMs: TICK_MS } : undefined;
}

function schedstat(): CpuClock | undefined {
  let fd: number;
  try {
    // opened by the thread that asks: /proc/thread-self names that thread for the descriptor's life
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(64);
  const read = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    let ns = 0;
    for (let i = 0; i < n; i++) {
      const c = buf[i]!;
      if (c < 48 || c > 57) break;
      ns = ns * 10 + (c - 48);
    }
    return ns / 1e6;
  };
  try {
    // a kernel without scheduler statistics reports zeros, which never move: then this source tells nothing
    return moves(read) ? { source: 'schedstat', now: read, stepMs: TICK_MS } : undefined;
  } catch {
    return undefined;
  }
}

const wall: CpuClock = { source: 'wall', now: () => performance.now(), stepMs: 0 };

let clock: CpuClock | undefined;

/** The calling thread's clock, chosen on first use (so a worker thread opens its own descriptor). */
export function cpuClock(): CpuClock {
  return (clock ??= threadCpuUsage() ?? schedstat() ?? wall);
}

/** The calling thread's Linux thread id, so another thread can read its CPU time; 0 where there is none. */
export function threadId(): number {
  try {
    // "<pid>/task/<tid>"
    return Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** CPU time (ms) thread `tid` of this process has used, read from another thread; undefined where unreadable. */
export function taskCpuMs(tid: number): number | undefined {
  if (!tid) return undefined;
  try {
    const ns = Number(/^\d+/.exec(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1'))?.[0]);
    return ns > 0 ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}
