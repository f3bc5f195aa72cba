/**
 * The sandbox pool (main thread): a few worker threads running QuickJS, a sticky choice of
 * worker per release so warm instances are reused, and a watchdog the guest cannot stop:
 * a worker whose guest code has been running for longer than `hardKillMs` in one stretch
 * (a long single instruction the interrupt handler never sees) is terminated and replaced.
 */
import { Worker } from 'node:worker_threads';
import { Outbox } from './outbox.ts';
import type { Invocation, InvocationResult, Limits, WorkerInbound, WorkerOutbound } from './protocol.ts';

export type SandboxOptions = {
  workers: number;
  limits: Limits;
  /** Longest a guest may run without yielding before its worker is terminated. */
  hardKillMs: number;
  maxInstancesPerWorker?: number;
  /**
   * Cap on each worker's WASM memory, shared by all its instances: the host's safety net, since
   * QuickJS's own limit does not see large strings and buffers. Default: 8 instance limits, at least 256 MiB.
   */
  workerMemoryBytes?: number;
  onWorkerExit?: (info: { index: number; reason: string }) => void;
};

/** The WASM memory cap of one worker, in bytes: a whole number of 64 KiB pages, at most the 2 GiB the build allows. */
export function workerMemoryBytes(options: Pick<SandboxOptions, 'workerMemoryBytes' | 'limits'>): number {
  const wanted = options.workerMemoryBytes ?? Math.max(256 * 1024 * 1024, 8 * options.limits.memoryBytes);
  const page = 64 * 1024;
  return Math.min(2048 * 1024 * 1024, Math.max(32 * 1024 * 1024, Math.ceil(wanted / page) * page));
}

export type InvokeInput = Omit<Invocation, 'id' | 'limits' | 'release' | 'request'> & {
  request: Invocation['request'];
  release: { releaseId: string; entry: string };
  /** Server module sources of the release; loaded only when a worker does not hold it yet. */
  loadSources: () => Promise<Record<string, string>>;
  onHostCall?: HostCallHandler;
  limits?: Partial<Limits>;
};

type Pending = { resolve: (r: InvocationResult) => void; releaseId: string; id: number; onHostCall?: HostCallHandler };

/** Answers the guest's asynchronous platform calls (ctx.jobs, ...). Throw `{ code, message }` to fail one. */
export type HostCallHandler = (method: string, args: unknown[]) => Promise<unknown>;

type Slot = {
  index: number;
  /** Shared with the worker: [0] when guest code started running (0 = idle), [1] id of the last invocation it began. */
  state: Float64Array;
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, Pending>;
  /** releases this worker has been sent sources for (it may have evicted some since) */
  loaded: Set<string>;
  alive: boolean;
  /** Messages for the worker, sent together at the end of this event-loop turn. */
  outbox: Outbox<WorkerInbound>;
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
  private watchdog: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(private readonly options: SandboxOptions) {
    for (let i = 0; i < options.workers; i++) this.slots.push(this.spawn(i));
    this.watchdog = setInterval(() => this.check(), Math.max(25, Math.min(100, options.hardKillMs / 4)));
    this.watchdog.unref();
  }

  private spawn(index: number): Slot {
    // Each worker gets its own state block, so a retired worker's can still be read after it is replaced.
    const state = new Float64Array(new SharedArrayBuffer(16));
    const worker = new Worker(WORKER_URL, {
      workerData: { state: state.buffer, maxInstances: this.options.maxInstancesPerWorker ?? 64, limits: this.options.limits, memoryBytes: workerMemoryBytes(this.options) },
      // Generous V8 limits for the thread itself: guest memory lives in the capped WASM memory.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref();
    const slot: Slot = {
      index,
      state,
      worker,
      pending: new Map(),
      loaded: new Set(),
      alive: true,
      outbox: new Outbox<WorkerInbound>(
        (msg, transfer) => {
          if (slot.alive) worker.postMessage(msg, transfer);
        },
        (msgs) => ({ t: 'batch', msgs }),
      ),
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
    const onMessage = (msg: WorkerOutbound): void => {
      if (msg.t === 'batch') return msg.msgs.forEach(onMessage);
      if (msg.t === 'host-call') return this.hostCall(slot, msg);
      if (msg.t !== 'result') return;
      const p = slot.pending.get(msg.id);
      if (!p) return;
      slot.pending.delete(msg.id);
      p.resolve(msg.result);
      // Out of memory, stack overflow or a crash poisons the worker's WASM module: retire it now,
      // before another invocation is routed to it.
      if (msg.result.poisoned) this.retire(slot, `poisoned (${msg.result.error?.kind ?? 'unknown'})`);
    };
    worker.on('message', onMessage);
    const onGone = (reason: string) => this.retire(slot, reason);
    worker.on('error', (err) => onGone(`worker error: ${err.message}`));
    worker.on('exit', (code) => onGone(`worker exited (${code})`));
    return slot;
  }

  private hostCall(slot: Slot, msg: Extract<WorkerOutbound, { t: 'host-call' }>): void {
    const pending = slot.pending.get(msg.invocationId);
    const reply = (r: Omit<Extract<WorkerInbound, { t: 'host-result' }>, 't' | 'callId'>) => {
      slot.outbox.push({ t: 'host-result', callId: msg.callId, ...r });
    };
    if (!pending?.onHostCall) return reply({ ok: false, error: { code: 'not_available', message: `${msg.method} is not available here` } });
    let args: unknown[];
    try {
      args = JSON.parse(msg.args) as unknown[];
    } catch {
      return reply({ ok: false, error: { code: 'invalid_request', message: 'arguments must be JSON' } });
    }
    pending.onHostCall(msg.method, args).then(
      (value) => reply({ ok: true, value: JSON.stringify(value ?? null) }),
      (err: unknown) => {
        const e = err as { code?: unknown; message?: unknown };
        reply({ ok: false, error: { code: typeof e?.code === 'string' ? e.code : 'internal_error', message: typeof e?.message === 'string' ? e.message : 'platform call failed' } });
      },
    );
  }

  /**
   * Replaces a worker. Once the old thread is really gone, invocations it never began (their ids
   * are above the last one it started) are retried on the replacement; the ones it had begun fail.
   */
  private retire(slot: Slot, reason: string, startedFailure: InvocationResult['error'] = { kind: 'killed', message: reason }): void {
    if (!slot.alive || this.closed) return;
    slot.alive = false;
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    this.options.onWorkerExit?.({ index: slot.index, reason });
    this.slots[slot.index] = this.spawn(slot.index);
    void slot.worker.terminate().finally(() => {
      const lastStarted = slot.state[1]!;
      for (const p of pending) {
        p.resolve(p.id > lastStarted ? { ok: false, error: { kind: 'retry', message: 'worker replaced before this invocation started' } } : { ok: false, error: startedFailure });
      }
    });
  }

  /** Terminates a worker whose guest code has run without yielding for too long. */
  private check(): void {
    const now = Date.now();
    for (const slot of this.slots) {
      const since = slot.state[0]!;
      if (since && now - since > this.options.hardKillMs && slot.alive) {
        this.retire(slot, 'watchdog: guest did not yield', {
          kind: 'timeout',
          message: `guest code ran for more than ${this.options.hardKillMs} ms without yielding; its worker was terminated`,
        });
      }
    }
  }

  private pick(releaseId: string): Slot {
    const preferred = this.slots[hashString(releaseId) % this.slots.length]!;
    const least = this.slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    // Stay on the warm worker unless it is clearly busier than another.
    return preferred.pending.size > least.pending.size + 2 ? least : preferred;
  }

  private async send(slot: Slot, inv: Invocation, onHostCall?: HostCallHandler): Promise<InvocationResult> {
    try {
      await slot.ready;
    } catch (err) {
      return { ok: false, error: { kind: 'crash', message: `sandbox worker failed to start: ${(err as Error).message}` } };
    }
    if (!slot.alive) return { ok: false, error: { kind: 'killed', message: 'worker is gone' } };
    return new Promise((resolve) => {
      slot.pending.set(inv.id, { resolve, releaseId: inv.release.releaseId, id: inv.id, onHostCall });
      slot.outbox.push({ t: 'invoke', inv }, inv.request.body ? [inv.request.body] : []);
    });
  }

  /** Never throws: every failure is an InvocationResult the caller turns into runtime_error. */
  async invoke(input: InvokeInput): Promise<InvocationResult> {
    try {
      return await this.invokeOnce(input);
    } catch (err) {
      return { ok: false, error: { kind: 'crash', message: (err as Error).message } };
    }
  }

  private async invokeOnce(input: InvokeInput): Promise<InvocationResult> {
    if (this.closed) return { ok: false, error: { kind: 'killed', message: 'sandbox pool is closed' } };
    const limits = { ...this.options.limits, ...input.limits };
    const base = { handler: input.handler, event: input.event, app: input.app, flags: input.flags, secrets: input.secrets, limits };
    const releaseId = input.release.releaseId;
    let sources: Record<string, string> | undefined;
    for (let attempt = 0; ; attempt++) {
      const slot = this.pick(releaseId);
      const needSources = !slot.loaded.has(releaseId) || attempt > 0;
      if (needSources) sources ??= await input.loadSources();
      // The body is transferred to the worker, so each attempt sends its own copy.
      const request = input.request.body ? { ...input.request, body: input.request.body.slice(0) } : input.request;
      const inv: Invocation = { ...base, id: this.nextId++, request, release: { ...input.release, ...(needSources ? { sources } : {}) } };
      const result = await this.send(slot, inv, input.onHostCall);
      const kind = result.error?.kind;
      if ((kind === 'missing-sources' || kind === 'retry') && attempt < 3) continue;
      if (needSources && slot.alive && result.ok) slot.loaded.add(releaseId);
      if (kind === 'timeout' || kind === 'killed' || kind === 'memory' || kind === 'stack') slot.loaded.delete(releaseId);
      return result;
    }
  }

  /** Drops a release's warm instances (e.g. after a rollback made it not live). */
  evict(releaseId: string): void {
    for (const slot of this.slots) {
      if (slot.loaded.delete(releaseId) && slot.alive) slot.outbox.push({ t: 'evict', releaseId });
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
