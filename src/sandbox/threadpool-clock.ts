/**
 * The CPU time libuv's thread pool has used, which is where Node's Web Crypto computes. A
 * `crypto.subtle` operation is billed to its call by what this clock moved while it ran (never more
 * than its wall-clock time), so a machine busy with other work (other apps' guest code, Postgres,
 * other processes) no longer makes an operation dearer: waiting for a core is not computing. The
 * pool's threads are found by name (`libuv-worker`) under /proc/self/task and read through their
 * schedstat (nanoseconds). Operations other sandbox workers run at the same moment on the pool's
 * other threads are counted too: then the bill is at most the wall-clock time, as before. Where
 * there is no such thread (not Linux, Deno's own crypto) there is no clock and the wall clock bills.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { TICK_MS, taskCpuMs } from './cpu-clock.ts';

/** How long a list of the pool's threads is trusted before it is read again (threads come once, at first use). */
const RESCAN_MS = 1000;
/** How long an empty list is: the threads may not have started yet, and where they have no names a scan per operation would cost more than the operations it bills. */
const RESCAN_EMPTY_MS = 100;

let threads: number[] = [];
let scannedAt = Number.NEGATIVE_INFINITY;

function scan(): number[] {
  const found: number[] = [];
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        if (readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim() === 'libuv-worker')
          found.push(Number(tid));
      } catch {
        // a thread that ended while being read
      }
    }
  } catch {
    // no /proc: no clock
  }
  return found;
}

/** CPU time (ms) the thread pool has used so far, or undefined where it cannot be read. */
export function threadPoolCpuMs(): number | undefined {
  const now = performance.now();
  if (now - scannedAt > (threads.length ? RESCAN_MS : RESCAN_EMPTY_MS)) {
    threads = scan();
    scannedAt = now;
  }
  if (threads.length === 0) return undefined;
  let total = 0;
  for (const tid of threads) {
    const ms = taskCpuMs(tid);
    // a thread that has not run yet reads 0 (taskCpuMs says undefined); one that is gone is dropped
    if (ms !== undefined) total += ms;
  }
  return total;
}

/**
 * Starts timing one operation; the function returned gives what to bill for it. The answer is seen
 * only when the sandbox thread is free, so time that thread spent on guest code meanwhile
 * (`busyMs`) is not the operation's; of the rest, what the pool computed, if the pool can be read,
 * plus a tick (a thread's schedstat moves at context switches and scheduler ticks, so a reading
 * taken as the operation finishes may lack up to one), never more than the wall-clock time.
 */
export function startBill(busyMs: () => number): () => number {
  const poolAtStart = threadPoolCpuMs();
  const started = performance.now();
  const busyAtStart = busyMs();
  return () => {
    const wallMs = Math.max(0, performance.now() - started - (busyMs() - busyAtStart));
    // read after the wall clock, so its own cost is not billed
    const poolAtEnd = poolAtStart === undefined ? undefined : threadPoolCpuMs();
    if (poolAtEnd === undefined) return wallMs;
    return Math.min(wallMs, Math.max(0, poolAtEnd - poolAtStart!) + TICK_MS);
  };
}
