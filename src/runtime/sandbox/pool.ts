/**
 * The sandbox pool (main thread): a few worker threads running QuickJS, a sticky choice of
 * worker per release so warm instances are reused, and a watchdog the guest cannot stop:
 * a worker whose guest code has been running for longer than `hardKillMs` in one stretch
 * (a long single instruction the interrupt handler never sees) is terminated and replaced.
 */
import { Worker } from 'node:worker_threads';
import type { Invocation, InvocationResult, Limits, WorkerInbound, WorkerOutbound } from './protocol.ts';

export type SandboxOptions = {
  workers: number;
  limits: Limits;
  /** Longest a guest may run without yielding before its worker is terminated. */
  hardKillMs: number;
  maxInstancesPerWorker?: number;
  onWorkerExit?: (info: { index: number; reason: string }) => void;
};

export type InvokeInput = Omit<Invocation, 'id' | 'limits' | 'release'> & {
  release: { releaseId: string; entry: string };
  /** Server module sources of the release; loaded only when a worker does not hold it yet. */
  loadSources: () => Promise<Record<string, string>>;
  limits?: Partial<Limits>;
};

type Pending = { resolve: (r: InvocationResult) => void; releaseId: string };

type Slot = {
  index: number;
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, Pending>;
  /** releases this worker has been sent sources for (it may have evicted some since) */
  loaded: Set<string>;
  alive: boolean;
};

const WORKER_URL = new URL('./worker-entry.mjs', import.meta.url);

function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export class SandboxPool {
  private slots: Slot[] = [];
  private nextId = 1;
  private busy: Float64Array;
  private watchdog: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(private readonly options: SandboxOptions) {
    this.busy = new Float64Array(new SharedArrayBuffer(8 * options.workers));
    for (let i = 0; i < options.workers; i++) this.slots.push(this.spawn(i));
    this.watchdog = setInterval(() => this.check(), Math.max(25, Math.min(100, options.hardKillMs / 4)));
    this.watchdog.unref();
  }

  private spawn(index: number): Slot {
    this.busy[index] = 0; // a fresh worker starts idle (the old one may have died mid-guest)
    const worker = new Worker(WORKER_URL, {
      workerData: { busy: this.busy.buffer, slot: index, maxInstances: this.options.maxInstancesPerWorker ?? 64 },
      // Generous V8 limits for the thread itself: guest memory is capped inside QuickJS.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref();
    const slot: Slot = {
      index,
      worker,
      pending: new Map(),
      loaded: new Set(),
      alive: true,
      ready: new Promise((resolve, reject) => {
        const onMessage = (msg: WorkerOutbound) => {
          if (msg.t === 'ready') {
            worker.off('message', onMessage);
            resolve();
          }
        };
        worker.on('message', onMessage);
        worker.once('error', reject);
      }),
    };
    slot.ready.catch(() => {});
    worker.on('message', (msg: WorkerOutbound) => {
      if (msg.t !== 'result') return;
      const p = slot.pending.get(msg.id);
      if (!p) return;
      slot.pending.delete(msg.id);
      p.resolve(msg.result);
      // Out of memory, stack overflow or a crash poisons the worker's WASM module: retire it now,
      // before another invocation is routed to it.
      const kind = msg.result.error?.kind;
      if (kind === 'memory' || kind === 'stack' || kind === 'crash') this.retire(slot, `poisoned (${kind})`);
    });
    const onGone = (reason: string) => this.retire(slot, reason);
    worker.on('error', (err) => onGone(`worker error: ${err.message}`));
    worker.on('exit', (code) => onGone(`worker exited (${code})`));
    return slot;
  }

  private retire(slot: Slot, reason: string): void {
    if (!slot.alive || this.closed) return;
    slot.alive = false;
    for (const [, p] of slot.pending) p.resolve({ ok: false, error: { kind: 'killed', message: reason } });
    slot.pending.clear();
    this.options.onWorkerExit?.({ index: slot.index, reason });
    void slot.worker.terminate();
    if (!this.closed) this.slots[slot.index] = this.spawn(slot.index);
  }

  /** Terminates a worker whose guest code has run without yielding for too long. */
  private check(): void {
    const now = Date.now();
    for (const slot of this.slots) {
      const since = this.busy[slot.index]!;
      if (since && now - since > this.options.hardKillMs && slot.alive) {
        for (const [, p] of slot.pending) p.resolve({ ok: false, error: { kind: 'timeout', message: `guest code ran for more than ${this.options.hardKillMs} ms without yielding; its worker was terminated` } });
        slot.pending.clear();
        this.retire(slot, 'watchdog: guest did not yield');
      }
    }
  }

  private pick(releaseId: string): Slot {
    const preferred = this.slots[hashString(releaseId) % this.slots.length]!;
    const least = this.slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    // Stay on the warm worker unless it is clearly busier than another.
    return preferred.pending.size > least.pending.size + 2 ? least : preferred;
  }

  private async send(slot: Slot, inv: Invocation): Promise<InvocationResult> {
    await slot.ready;
    if (!slot.alive) return { ok: false, error: { kind: 'killed', message: 'worker is gone' } };
    return new Promise((resolve) => {
      slot.pending.set(inv.id, { resolve, releaseId: inv.release.releaseId });
      const transfer = inv.request.body ? [inv.request.body] : [];
      slot.worker.postMessage({ t: 'invoke', inv } satisfies WorkerInbound, transfer);
    });
  }

  async invoke(input: InvokeInput): Promise<InvocationResult> {
    if (this.closed) return { ok: false, error: { kind: 'killed', message: 'sandbox pool is closed' } };
    const limits = { ...this.options.limits, ...input.limits };
    const slot = this.pick(input.release.releaseId);
    const base = { id: 0, handler: input.handler, app: input.app, request: input.request, secrets: input.secrets, limits };
    const withSources = async (): Promise<Invocation> => ({ ...base, id: this.nextId++, release: { ...input.release, sources: await input.loadSources() } });
    let inv: Invocation = slot.loaded.has(input.release.releaseId) ? { ...base, id: this.nextId++, release: { ...input.release } } : await withSources();
    // The body is transferred, so keep a copy in case the worker asks for the sources again.
    const body = input.request.body;
    if (body) inv.request = { ...inv.request, body: body.slice(0) };
    let result = await this.send(slot, inv);
    if (!result.ok && result.error?.kind === 'missing-sources') {
      inv = await withSources();
      if (body) inv.request = { ...inv.request, body: body.slice(0) };
      result = await this.send(slot, inv);
    }
    if (inv.release.sources && slot.alive) slot.loaded.add(input.release.releaseId);
    if (!result.ok && (result.error?.kind === 'timeout' || result.error?.kind === 'killed' || result.error?.kind === 'memory' || result.error?.kind === 'stack')) {
      slot.loaded.delete(input.release.releaseId);
    }
    return result;
  }

  /** Drops a release's warm instances (e.g. after a rollback made it not live). */
  evict(releaseId: string): void {
    for (const slot of this.slots) {
      if (slot.loaded.delete(releaseId) && slot.alive) slot.worker.postMessage({ t: 'evict', releaseId } satisfies WorkerInbound);
    }
  }

  /** Starts every worker's QuickJS module now rather than on the first request. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.ready));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
