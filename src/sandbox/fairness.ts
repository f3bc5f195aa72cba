/**
 * CPU fairness between releases. Calls run FIFO inside a worker, so 64 calls of a CPU-heavy app
 * queued there would make every other app's call wait behind them. Each release may have only so
 * many calls in flight at once, fewer the more CPU its calls use (about `cpuBudgetMs` of queued CPU
 * per worker); the rest wait in the release's own queue on the main thread, so other apps' calls
 * reach the worker at once. A release whose queue is full, or whose call waited longer than its
 * wall-clock limit, is refused (the pool answers `overloaded`: a 503 with Retry-After for its own
 * visitor). Pure bookkeeping over timers, tested without threads (test/sandbox/fairness.test.ts).
 */
export const FAIRNESS = {
  cpuBudgetMs: 100,
  minPerWorker: 2,
  maxPerWorker: 64,
  unmeasuredPerWorker: 8,
  maxQueued: 256,
};

/** Releases whose queues are kept at most: past it, the CPU history of idle ones goes first. */
const MAX_QUEUES = 10_000;

type AppQueue = {
  running: number;
  /** average CPU per call, 0 until one finished */
  cpuMs: number;
  waiting: { start: () => void; timer: ReturnType<typeof setTimeout> }[];
};

/** Calls of one release allowed in flight on `workers` workers: fewer the more CPU its calls use. */
export function capOf(cpuMs: number, workers: number): number {
  if (cpuMs === 0) return FAIRNESS.unmeasuredPerWorker * workers;
  const perWorker = Math.floor(FAIRNESS.cpuBudgetMs / Math.max(cpuMs, 0.5));
  return Math.min(FAIRNESS.maxPerWorker, Math.max(FAIRNESS.minPerWorker, perWorker)) * workers;
}

/** How a call's turn came: at once, after waiting `queuedMs`, or refused (after waiting, if it did). */
export type Turn = { queuedMs?: number; refused?: string };

export class FairQueues {
  private queues = new Map<string, AppQueue>();

  /**
   * The call's turn to go to a worker: at once while its release has room, else after a call of
   * the same release hands over its place, or refused when the queue is full or `wallMs` passes.
   * Every turn not refused must be followed by `leave`.
   */
  async enter(releaseId: string, workers: number, wallMs: number): Promise<Turn> {
    let q = this.queues.get(releaseId);
    if (!q) this.queues.set(releaseId, (q = { running: 0, cpuMs: 0, waiting: [] }));
    if (q.running < capOf(q.cpuMs, workers)) {
      q.running++;
      return {};
    }
    if (q.waiting.length >= FAIRNESS.maxQueued)
      return { refused: `${q.waiting.length} calls of this release are already waiting` };
    const queuedAt = performance.now();
    const queue = q;
    // woken by a finishing call of the same release, which hands over its place (running stays counted)
    const started = await new Promise<boolean>((resolve) => {
      const entry = {
        start: () => (clearTimeout(entry.timer), resolve(true)),
        timer: setTimeout(
          () => (queue.waiting.splice(queue.waiting.indexOf(entry), 1), resolve(false)),
          wallMs,
        ),
      };
      queue.waiting.push(entry);
    });
    const queuedMs = performance.now() - queuedAt;
    return started
      ? { queuedMs }
      : { queuedMs, refused: `the call waited ${wallMs} ms for its turn` };
  }

  /** A call that had its turn is over; `cpuMs` is what it used, when known. Its place goes to the next waiting call of its release. */
  leave(releaseId: string, workers: number, cpuMs?: number): void {
    const q = this.queues.get(releaseId);
    if (!q) return;
    if (cpuMs !== undefined) q.cpuMs = q.cpuMs === 0 ? cpuMs : q.cpuMs * 0.8 + cpuMs * 0.2;
    const next = q.running <= capOf(q.cpuMs, workers) ? q.waiting.shift() : undefined;
    if (next) next.start();
    else q.running--;
    if (this.queues.size > MAX_QUEUES) {
      for (const [id, other] of this.queues)
        if (other.running === 0 && other.waiting.length === 0 && id !== releaseId)
          this.queues.delete(id);
    }
  }

  /** Calls waiting for their turn, all releases together. */
  waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.waiting.length;
    return n;
  }
}
