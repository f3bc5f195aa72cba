/**
 * The sandbox pool (main thread): a few worker threads running QuickJS, a sticky choice of
 * worker per release so warm instances are reused, and a watchdog the guest cannot stop:
 * a worker whose guest code has been running for longer than `hardKillMs` in one stretch
 * (a long single instruction the interrupt handler never sees) is terminated and replaced.
 */
import {
  FETCHES_FAILED,
  FETCHES_OK,
  LAST_BEGUN,
  RUNNING_ID,
  RUNNING_SINCE,
  SHARED_STATE_BYTES,
  THREAD_ID,
} from './shared-state.ts';
import { Worker } from 'node:worker_threads';
import { taskCpuMs } from './cpu-clock.ts';
import { loadBudgetMs } from './limits.ts';
import { Outbox } from './outbox.ts';
import {
  TIME_ORIGIN,
  type CallRequest,
  type FetchPolicy,
  type Invocation,
  type InvocationResult,
  type Limits,
  type StreamEnd,
  type WorkerInbound,
  type WorkerOutbound,
} from './protocol.ts';
import { decodeResult, encodeInvocation, requestInput } from './wire.ts';
import {
  keepFetchCounts,
  newCounters,
  type PoolCounters,
  type PoolStats,
  retireReason,
} from './pool-stats.ts';

export type SandboxOptions = {
  workers: number;
  limits: Limits;
  /** Longest a guest may run without yielding before its worker is terminated (a call's own CPU limit may make it shorter: `killAfterMs`). */
  hardKillMs: number;
  /** Warm instances one worker keeps at most (a backstop; memory decides first). Default 10,000. */
  maxInstancesPerWorker?: number;
  /** Memory the warm instances of one worker may hold, measured per instance. Default: the worker's WASM cap less room for three calls at their limit, at least a quarter of it. */
  instanceBudgetBytes?: number;
  /**
   * Cap on each worker's WASM memory, shared by all its instances: the host's safety net, since
   * QuickJS's own limit does not see large strings and buffers. Default: 8 instance limits, at least 256 MiB.
   */
  workerMemoryBytes?: number;
  onWorkerExit?: (info: { index: number; reason: string }) => void;
  /** Where app code's fetch may go (default: nowhere but public addresses). */
  fetchPolicy?: FetchPolicy;
};

/** The WASM memory cap of one worker, in bytes: a whole number of 64 KiB pages, at most the 2 GiB the build allows. */
export function workerMemoryBytes(
  options: Pick<SandboxOptions, 'workerMemoryBytes' | 'limits'>,
): number {
  const wanted =
    options.workerMemoryBytes ?? Math.max(256 * 1024 * 1024, 8 * options.limits.memoryBytes);
  const page = 64 * 1024;
  return Math.min(2048 * 1024 * 1024, Math.max(32 * 1024 * 1024, Math.ceil(wanted / page) * page));
}

/** The memory one worker's warm instances may hold: what the WASM cap leaves after room for three calls at their limit. */
export function instanceBudgetBytes(
  options: Pick<SandboxOptions, 'instanceBudgetBytes' | 'workerMemoryBytes' | 'limits'>,
): number {
  if (options.instanceBudgetBytes !== undefined) return options.instanceBudgetBytes;
  const cap = workerMemoryBytes(options);
  return Math.max(cap / 4, cap - 3 * options.limits.memoryBytes);
}

export type InvokeInput = Omit<Invocation, 'id' | 'limits' | 'release' | 'input' | 'body'> & {
  request: CallRequest;
  /** For job and webhook handlers: the event object, as JSON (given to the handler instead of the request). */
  event?: string;
  release: { releaseId: string; entry: string };
  /** Server module sources of the release; loaded only when a worker does not hold it yet. */
  loadSources: () => Promise<Record<string, string>>;
  onHostCall?: HostCallHandler;
  limits?: Partial<Limits>;
};

/** `changed`: the call made a platform call that changes something, so it must not run twice. */
type Pending = {
  resolve: (r: InvocationResult) => void;
  releaseId: string;
  id: number;
  /** The watchdog's limit for this call's stretches (`killAfterMs`). */
  killAfterMs: number;
  onHostCall?: HostCallHandler;
  changed?: boolean;
};

/** Platform calls that only read: a call that made no other may safely run again after its worker died under it. */
const READ_ONLY_CALLS = new Set(['data.get', 'data.list', 'files.signedUrl']);

import { chooseWorker, spareReady } from './placement.ts';
import { FairQueues } from './fairness.ts';
import { QUARANTINE, type Quarantine, QuarantineBook } from './quarantine.ts';

export { QUARANTINE, type Quarantine };

/** A file upload's bytes, copied and hashed by the sandbox worker (never parsed from JSON on this thread). */
export type HostUpload = { bytes: Buffer; sha256: Buffer };
/** Answers the guest's asynchronous platform calls (ctx.jobs, ...). Throw `{ code, message }` to fail one. */
export type HostCallHandler = (
  method: string,
  args: unknown[],
  upload?: HostUpload,
) => Promise<unknown>;

/** A streamed answer arriving from a worker. */
type StreamIn = { chunk(bytes: ArrayBuffer): void; end(end: StreamEnd): void };

type Slot = {
  /** Position in the shared pool, or -1 for a quarantined release's own worker. */
  index: number;
  /** The quarantined release this worker belongs to. */
  isolatedFor?: string;
  /** Shared with the worker, read without a message: its slots are named in shared-state.ts. */
  state: Float64Array;
  /** The running stretch of guest code the watchdog has seen: when it began, when it was first seen, and the thread's CPU time then. */
  watched?: { since: number; seenAt: number; cpuMs: number | undefined };
  /** Calls sent with sources and not answered yet: each may take the worker's spare. */
  coldInFlight: number;
  /** Invocations sent to it (`BEGUN_COUNT` counts those it began: the rest wait in its queue). */
  sent: number;
  /** The CPU its recent calls took, ms (a moving average): how long a call queued there waits per call ahead of it. */
  callMs: number;
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, Pending>;
  /** Streamed answers still flowing from this worker, by invocation id. */
  streams: Map<number, StreamIn>;
  /** releases this worker has been sent sources for (it may have evicted some since), oldest first, at most `MAX_LOADED` */
  loaded: Set<string>;
  alive: boolean;
  /** Messages for the worker, sent together at the end of this event-loop turn. */
  outbox: Outbox<WorkerInbound>;
};

const WORKER_URL = new URL('./worker-entry.mjs', import.meta.url);

/**
 * How long one stretch of a call's guest code may run before the watchdog ends its worker: three
 * times the most its instance may legitimately run at once (a module's load, `loadBudgetMs`), at
 * least a second, at most `hardKillMs`. The interrupt stops guest code at its CPU limit; the
 * watchdog is for code the interrupt cannot reach (a regular expression, a native operation), so a
 * Free call is not left running for the largest plan's time.
 */
function killAfterMs(cpuMs: number, hardKillMs: number): number {
  return Math.min(hardKillMs, Math.max(1000, 3 * loadBudgetMs(cpuMs)));
}

/** Releases remembered per worker: a worker keeps at most its backstop of warm instances (10,000) anyway. */
const MAX_LOADED = 20_000;

export class SandboxPool {
  /** what the pool has done since it started (`stats()` adds what it holds now) */
  readonly counters: PoolCounters = newCounters();
  private slots: Slot[] = [];
  private nextId = 1;
  private watchdog: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(private readonly options: SandboxOptions) {
    for (let i = 0; i < options.workers; i++) this.slots.push(this.spawn(i));
    this.watchdog = setInterval(
      () => this.check(),
      Math.max(25, Math.min(100, options.hardKillMs / 4)),
    );
    this.watchdog.unref();
  }

  private spawn(index: number, isolatedFor?: string): Slot {
    // Each worker gets its own state block, so a retired worker's can still be read after it is replaced.
    const state = new Float64Array(new SharedArrayBuffer(SHARED_STATE_BYTES));
    const worker = new Worker(WORKER_URL, {
      workerData: {
        state: state.buffer,
        maxInstances: this.options.maxInstancesPerWorker ?? 10_000,
        instanceBudgetBytes: instanceBudgetBytes(this.options),
        limits: this.options.limits,
        memoryBytes: workerMemoryBytes(this.options),
        fetchPolicy: this.options.fetchPolicy,
      },
      // Generous V8 limits for the thread itself: guest memory lives in the capped WASM memory.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref();
    const slot: Slot = {
      index,
      isolatedFor,
      state,
      worker,
      pending: new Map(),
      streams: new Map(),
      loaded: new Set(),
      coldInFlight: 0,
      sent: 0,
      callMs: 0,
      alive: true,
      outbox: new Outbox<WorkerInbound>(
        (msg, transfer) => {
          if (slot.alive) worker.postMessage(msg, transfer);
        },
        (msgs) => ({ t: 'batch', msgs }),
      ),
      ready: new Promise((resolve, reject) => {
        const onMessage = (msg: WorkerOutbound) => {
          if (!Array.isArray(msg) && msg.t === 'ready') {
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
      if (Array.isArray(msg)) return this.answered(slot, decodeResult(msg), msg[0]);
      if (msg.t === 'batch') return msg.msgs.forEach(onMessage);
      if (msg.t === 'host-call') return this.hostCall(slot, msg);
      if (msg.t === 'chunk') return slot.streams.get(msg.id)?.chunk(msg.bytes);
      if (msg.t === 'end') {
        slot.streams.get(msg.id)?.end(msg.end);
        if (msg.end.poisoned) this.retire(slot, `poisoned (${msg.end.error?.kind ?? 'unknown'})`);
        return;
      }
    };
    worker.on('message', onMessage);
    const onGone = (reason: string) => this.retire(slot, reason);
    worker.on('error', (err) => onGone(`worker error: ${err.message}`));
    worker.on('exit', (code) => onGone(`worker exited (${code})`));
    return slot;
  }

  /** A worker's answer to one of its calls. */
  private answered(slot: Slot, result: InvocationResult, id: number): void {
    const p = slot.pending.get(id);
    if (!p) return;
    slot.pending.delete(id);
    if (result.cpuMs !== undefined) slot.callMs += (result.cpuMs - slot.callMs) / 16;
    if (result.response?.streaming)
      result.response = { ...result.response, ...this.streamIn(slot, id) };
    // Out of memory, stack overflow or a crash poisons the worker's WASM module: retire it now,
    // before another invocation is routed to it. The calls beside it run again elsewhere.
    if (result.poisoned) {
      const quarantine = this.killedBy(p.releaseId);
      p.resolve(quarantine ? { ...result, quarantine } : result);
      this.retire(slot, `poisoned (${result.error?.kind ?? 'unknown'})`);
      return;
    }
    p.resolve(result);
  }

  /**
   * The visitor's side of a streamed answer: a ReadableStream that asks the worker for one chunk per
   * read (so nothing piles up faster than the visitor takes it) and tells it when the visitor goes
   * away, and a promise of how the stream ended.
   */
  private streamIn(
    slot: Slot,
    id: number,
  ): { stream: ReadableStream<Uint8Array>; streamEnd: Promise<StreamEnd> } {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let waiting: (() => void) | undefined;
    let endWith!: (end: StreamEnd) => void;
    const streamEnd = new Promise<StreamEnd>((resolve) => (endWith = resolve));
    // over: the worker said it ended; gone: the visitor cancelled (chunks still on their way are dropped)
    let over = false;
    let gone = false;
    const settle = (fn: () => void) => {
      try {
        fn();
      } catch {
        // the stream was closed from the visitor's side meanwhile
      }
    };
    const handle: StreamIn = {
      chunk(bytes) {
        if (over || gone) return;
        settle(() => controller.enqueue(new Uint8Array(bytes)));
        waiting?.();
      },
      end(end) {
        if (over) return;
        over = true;
        slot.streams.delete(id);
        // the HTTP server prints a failed body's error: name the kind only, never what the app said
        if (!gone)
          settle(() =>
            end.ok
              ? controller.close()
              : controller.error(
                  new Error(`app response stream ended early (${end.error?.kind ?? 'failed'})`),
                ),
          );
        waiting?.();
        endWith(end);
      },
    };
    slot.streams.set(id, handle);
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
        },
        pull: () =>
          new Promise<void>((resolve) => {
            waiting = resolve;
            slot.outbox.push({ t: 'pull', id });
          }),
        cancel: () => {
          gone = true;
          waiting?.();
          if (!over && slot.alive) slot.outbox.push({ t: 'cancel', id });
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, streamEnd };
  }

  private hostCall(slot: Slot, msg: Extract<WorkerOutbound, { t: 'host-call' }>): void {
    const pending = slot.pending.get(msg.invocationId);
    const reply = (r: Omit<Extract<WorkerInbound, { t: 'host-result' }>, 't' | 'callId'>) => {
      slot.outbox.push({ t: 'host-result', callId: msg.callId, ...r });
    };
    if (pending && !READ_ONLY_CALLS.has(msg.method)) pending.changed = true;
    if (!pending?.onHostCall)
      return reply({
        ok: false,
        error: { code: 'not_available', message: `${msg.method} is not available here` },
      });
    let args: unknown[];
    try {
      args = JSON.parse(msg.args) as unknown[];
    } catch {
      return reply({
        ok: false,
        error: { code: 'invalid_request', message: 'arguments must be JSON' },
      });
    }
    const upload = msg.upload && {
      bytes: Buffer.from(msg.upload.bytes),
      sha256: Buffer.from(msg.upload.sha256, 'hex'),
    };
    pending.onHostCall(msg.method, args, upload).then(
      (value) => reply({ ok: true, value: JSON.stringify(value ?? null) }),
      (err: unknown) => {
        const e = err as { code?: unknown; message?: unknown };
        reply({
          ok: false,
          error: {
            code: typeof e?.code === 'string' ? e.code : 'internal_error',
            message: typeof e?.message === 'string' ? e.message : 'platform call failed',
          },
        });
      },
    );
  }

  /**
   * Replaces a worker. Once the old thread is really gone, the calls it held run again on a fresh
   * worker: those it never began, and those it had begun that changed nothing yet (bystanders of
   * the call that killed it, whose visitors must not see another tenant's crash). The call whose
   * guest code was running fails, as does any that already changed something.
   */
  private retire(slot: Slot, reason: string, runningFailure?: InvocationResult['error']): void {
    if (!slot.alive || this.closed) return;
    slot.alive = false;
    this.counters.retired[retireReason(reason)]++;
    keepFetchCounts(this.counters, slot.state);
    const running = slot.state[RUNNING_ID] || undefined;
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    for (const s of [...slot.streams.values()])
      s.end({
        ok: false,
        error: { kind: 'killed', message: `its sandbox worker stopped (${reason})` },
      });
    this.options.onWorkerExit?.({ index: slot.index, reason });
    if (slot.isolatedFor) {
      if (this.quarantine.worker(slot.isolatedFor) === slot)
        this.quarantine.replace(slot.isolatedFor, this.spawn(-1, slot.isolatedFor));
    } else this.slots[slot.index] = this.spawn(slot.index);
    const culprit =
      runningFailure && running !== undefined ? pending.find((p) => p.id === running) : undefined;
    const quarantine = culprit ? this.killedBy(culprit.releaseId) : undefined;
    void slot.worker.terminate().finally(() => {
      const lastStarted = slot.state[LAST_BEGUN]!;
      for (const p of pending) {
        if (p === culprit)
          p.resolve({ ok: false, error: runningFailure!, ...(quarantine ? { quarantine } : {}) });
        else if (p.id > lastStarted || !p.changed)
          p.resolve({
            ok: false,
            error: { kind: 'retry', message: `its worker was replaced (${reason})` },
          });
        else p.resolve({ ok: false, error: { kind: 'killed', message: reason } });
      }
    });
  }

  /** Releases that keep killing their worker: their own worker, or their calls refused for a while. */
  private quarantine = new QuarantineBook<Slot>();

  /** Counts a worker kill against a release; the quarantine it starts, if this kill is one too many. */
  private killedBy(releaseId: string): Quarantine | undefined {
    return this.quarantine.killed(releaseId, Date.now(), () => this.spawn(-1, releaseId));
  }

  /** Every live worker: the shared ones and quarantined releases' own. */
  private allSlots(): Slot[] {
    return [...this.slots, ...this.quarantine.workers()];
  }

  /**
   * Terminates a worker whose guest code has run without yielding for too long: `hardKillMs` of the
   * thread's CPU time (where it can be read), so a busy host does not kill a worker whose guest only
   * waited for a core. A stretch is first seen by a check up to 100 ms after it began; the time
   * before that is counted as if all of it had been CPU. Where the thread's CPU time cannot be
   * read, wall-clock time decides.
   */
  private check(): void {
    const now = TIME_ORIGIN + performance.now(); // the clock of RUNNING_SINCE
    for (const slot of this.allSlots()) {
      const since = slot.state[RUNNING_SINCE]!;
      if (!since) continue;
      if (slot.watched?.since !== since)
        slot.watched = { since, seenAt: now, cpuMs: taskCpuMs(slot.state[THREAD_ID]!) };
      const limit =
        slot.pending.get(slot.state[RUNNING_ID]!)?.killAfterMs ?? this.options.hardKillMs;
      if (now - since <= limit || !slot.alive) continue;
      const { seenAt, cpuMs } = slot.watched;
      const cpuNow = cpuMs === undefined ? undefined : taskCpuMs(slot.state[THREAD_ID]!);
      // before it was seen, it may have used every millisecond of the wall clock
      const ranMs = cpuNow === undefined ? now - since : cpuNow - cpuMs! + (seenAt - since);
      if (ranMs > limit) {
        this.retire(slot, 'watchdog: guest did not yield', {
          kind: 'timeout',
          message: `guest code ran for more than ${Math.round(limit)} ms without yielding; its worker was terminated`,
        });
      }
    }
  }

  private pick(releaseId: string): Slot {
    const own = this.quarantine.ownWorker(
      releaseId,
      Date.now(),
      (slot: Slot) => slot.pending.size > 0,
      // quarantine over: back to the shared workers once its own is idle
      (slot: Slot) => {
        slot.alive = false;
        void slot.worker.terminate();
      },
    );
    return own ?? chooseWorker(this.slots, releaseId, TIME_ORIGIN + performance.now());
  }

  private async send(
    slot: Slot,
    inv: Invocation,
    onHostCall?: HostCallHandler,
  ): Promise<InvocationResult> {
    try {
      await slot.ready;
    } catch (err) {
      return {
        ok: false,
        error: {
          kind: 'crash',
          message: `sandbox worker failed to start: ${(err as Error).message}`,
        },
      };
    }
    if (!slot.alive) return { ok: false, error: { kind: 'killed', message: 'worker is gone' } };
    return new Promise((resolve) => {
      slot.pending.set(inv.id, {
        resolve,
        releaseId: inv.release.releaseId,
        id: inv.id,
        killAfterMs: killAfterMs(inv.limits.cpuMs, this.options.hardKillMs),
        onHostCall,
      });
      slot.sent++;
      slot.outbox.push(encodeInvocation(inv), inv.body ? [inv.body] : []);
    });
  }

  /** Never throws: every failure is an InvocationResult the caller turns into runtime_error. */
  async invoke(input: InvokeInput): Promise<InvocationResult> {
    const releaseId = input.release.releaseId;
    const wallMs = input.limits?.wallMs ?? this.options.limits.wallMs;
    const turn = await this.fair.enter(releaseId, this.slots.length, wallMs);
    if (turn.queuedMs !== undefined) {
      this.counters.queued++;
      this.counters.queueWaitMs += turn.queuedMs;
    }
    if (turn.refused !== undefined) {
      this.counters.overloaded++;
      return { ok: false, error: { kind: 'overloaded', message: turn.refused } };
    }
    let cpuMs: number | undefined;
    try {
      const result = await this.invokeOnce(input);
      this.counters.calls++;
      if (typeof result.cpuMs === 'number') {
        this.counters.cpuMs += result.cpuMs;
        cpuMs = result.cpuMs;
      }
      return result;
    } catch (err) {
      return { ok: false, error: { kind: 'crash', message: (err as Error).message } };
    } finally {
      this.fair.leave(releaseId, this.slots.length, cpuMs);
    }
  }

  private fair = new FairQueues();

  private async invokeOnce(input: InvokeInput): Promise<InvocationResult> {
    if (this.closed)
      return { ok: false, error: { kind: 'killed', message: 'sandbox pool is closed' } };
    const left = this.quarantine.refusedFor(input.release.releaseId, Date.now());
    if (left)
      return {
        ok: false,
        error: {
          kind: 'quarantined',
          message: `this release stopped its sandbox worker ${QUARANTINE.kills} times within ${QUARANTINE.withinMs / 1000} s; its calls are refused for ${left} s more`,
        },
      };
    const limits = { ...this.options.limits, ...input.limits };
    const releaseId = input.release.releaseId;
    const callInput = input.event ?? requestInput(input.request);
    let sources: Record<string, string> | undefined;
    for (let attempt = 0; ; attempt++) {
      const slot = this.pick(releaseId);
      const needSources = !slot.loaded.has(releaseId) || attempt > 0;
      // Counted as loaded from now on, so the release's next calls follow it to this worker.
      if (needSources) {
        slot.loaded.delete(releaseId);
        slot.loaded.add(releaseId);
        if (slot.loaded.size > MAX_LOADED) slot.loaded.delete(slot.loaded.values().next().value!);
        slot.coldInFlight++;
      }
      let result: InvocationResult;
      try {
        if (needSources) sources ??= await input.loadSources();
        // One literal, not spreads: built from spreads it took ~2 µs more to make, and a trivial
        // server call cost ~6 µs more of main-thread CPU under load (`bench:origin`).
        const release: Invocation['release'] = { releaseId, entry: input.release.entry };
        if (needSources) release.sources = sources;
        const inv: Invocation = {
          id: this.nextId++,
          handler: input.handler,
          input: callInput,
          app: input.app,
          flags: input.flags,
          secrets: input.secrets,
          limits,
          release,
        };
        // The body is transferred to the worker, so each attempt sends its own copy.
        if (input.request.body) inv.body = input.request.body.slice(0);
        result = await this.send(slot, inv, input.onHostCall);
      } catch (err) {
        if (needSources) slot.loaded.delete(releaseId);
        throw err;
      } finally {
        if (needSources) slot.coldInFlight--;
      }
      if (needSources && !(slot.alive && result.ok)) slot.loaded.delete(releaseId);
      const kind = result.error?.kind;
      if ((kind === 'missing-sources' || kind === 'retry') && attempt < 3) continue;
      if (kind === 'timeout' || kind === 'killed' || kind === 'memory' || kind === 'stack')
        slot.loaded.delete(releaseId);
      return result;
    }
  }

  /** The counters with what the pool holds now: workers, warm releases, calls in flight and waiting. */
  stats(): PoolStats {
    const slots = [...this.allSlots()].filter((s) => s.alive);
    const waiting = this.fair.waiting();
    const c = this.counters;
    return {
      ...c,
      retired: { ...c.retired },
      fetchesOk: c.fetchesOk + slots.reduce((n, s) => n + s.state[FETCHES_OK]!, 0),
      fetchesFailed: c.fetchesFailed + slots.reduce((n, s) => n + s.state[FETCHES_FAILED]!, 0),
      workers: slots.length,
      warmReleases: slots.reduce((n, s) => n + s.loaded.size, 0),
      inFlight: slots.reduce((n, s) => n + s.pending.size, 0),
      waiting,
    };
  }

  /** Whether some worker is running guest code now. */
  guestCodeRunning(): boolean {
    return this.slots.some((s) => s.state[RUNNING_ID] !== 0);
  }

  /** Whether every worker has a blank instance ready for a release new to it (what a quiet moment gives). */
  sparesReady(): boolean {
    return this.slots.every(spareReady);
  }

  /** Whether some worker was sent this release's sources (its next call may still find it evicted). */
  holds(releaseId: string): boolean {
    // on every server call: no array of all slots made for it
    return (
      this.slots.some((s) => s.loaded.has(releaseId)) ||
      this.quarantine.worker(releaseId)?.loaded.has(releaseId) === true
    );
  }

  /** Drops a release's warm instances (e.g. after a rollback made it not live). */
  evict(releaseId: string): void {
    for (const slot of this.allSlots()) {
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
    for (const slot of this.allSlots())
      for (const s of [...slot.streams.values()])
        s.end({ ok: false, error: { kind: 'killed', message: 'the sandbox is shutting down' } });
    await Promise.all(this.allSlots().map((s) => s.worker.terminate()));
  }
}
