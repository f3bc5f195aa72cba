/**
 * The CPU time the calling thread has used, in milliseconds: what a call's CPU budget is measured
 * in. Wall-clock time is not CPU time on a loaded machine: a sandbox thread that waits for a core
 * (other apps' workers, Postgres, anything else on the host) would bill that wait to the app, and a
 * 3 ms handler failed its 50 ms budget once the cores were shared six ways (measured).
 *
 * Sources, cheapest first: `process.threadCpuUsage()` (Node 23.9 and later, ~0.6 µs), the first
 * field of `/proc/thread-self/schedstat` read again through one open descriptor (Linux, nanoseconds,
 * ~1.5 µs), and where neither exists, wall-clock time (what the budget meant before). Callers read it
 * at a segment's edges and, in the interrupt handler, only once wall-clock time says the budget may
 * be spent (a thread's CPU time never grows faster than wall-clock time), so a call pays two reads.
 */
import { openSync, readFileSync, readlinkSync, readSync } from 'node:fs';

export type CpuClock = { readonly source: 'thread-cpu-usage' | 'schedstat' | 'wall'; now(): number };

function threadCpuUsage(): CpuClock | undefined {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  if (typeof usage !== 'function') return undefined;
  try {
    usage();
  } catch {
    return undefined;
  }
  return {
    source: 'thread-cpu-usage',
    now: () => {
      const u = usage.call(process);
      return (u.user + u.system) / 1000;
    },
  };
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
    // a kernel without scheduler statistics reports zeros: then this source tells nothing
    const first = read();
    let x = 0;
    for (let i = 0; i < 200_000; i++) x += i;
    if (!(read() > first) || x < 0) return undefined;
  } catch {
    return undefined;
  }
  return { source: 'schedstat', now: read };
}

const wall: CpuClock = { source: 'wall', now: () => performance.now() };

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
