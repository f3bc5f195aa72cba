/**
 * The sandbox pool (main thread): a few worker threads running QuickJS, a sticky choice of
 * worker per release so warm instances are reused, and a watchdog the guest cannot stop:
 * a worker whose guest code has been running for longer than `hardKillMs` in one stretch
 * (a long single instruction the interrupt handler never sees) is terminated and replaced.
 */
import { engineChoice } from './engine.ts';
import { type EngineChoice, OWN_ENGINE_NATIVE_STACK_MB } from './engine-variant.ts';
import { LAST_BEGUN, RUNNING_ID, SHARED_STATE_BYTES } from './shared-state.ts';
import { Worker } from 'node:worker_threads';
import { overdueStretch, WALL_MARGIN_MS } from './watchdog.ts';
import { Outbox } from './outbox.ts';
import { sandboxWorkerExecArgv, sandboxWorkerUrl } from './worker-bundle.ts';
import {
  TIME_ORIGIN,
  type Invocation,
  type InvocationResult,
  type WorkerInbound,
  type WorkerOutbound,
} from './protocol.ts';
import { decodeResult, encodeInvocation, requestInput } from './wire.ts';
import {
  keepFetchCounts,
  newCounters,
  type PoolCounters,
  type PoolStats,
  poolStats,
  retireReason,
} from './pool-stats.ts';

import { chooseWorker, spareReady } from './placement.ts';
import {
  instanceBudgetBytes,
  killAfterMs,
  type SandboxOptions,
  workerMemoryBytes,
} from './pool-options.ts';
import {
  answerHostCall,
  type HostCallHandler,
  type InvokeInput,
  type Slot,
  streamIn,
} from './pool-slot.ts';
import { FairQueues } from './fairness.ts';
import { QUARANTINE, type Quarantine, QuarantineBook } from './quarantine.ts';

export { QUARANTINE, type Quarantine };
export type { SandboxOptions } from './pool-options.ts';
export type { HostCallHandler, HostUpload, InvokeInput } from './pool-slot.ts';

/** Releases remembered per worker: a worker keeps at most its backstop of warm instances (10,000) anyway. */
const MAX_LOADED = 20_000;

export class SandboxPool {
  /** what the pool has done since it started (`stats()` adds what it holds now) */
  readonly counters: PoolCounters = newCounters();
  private slots: Slot[] = [];
  private nextId = 1;
  private watchdog: ReturnType<typeof setInterval>;
  private closed = false;

  private readonly options: SandboxOptions;
  /** which QuickJS build the threads load (engine.ts) */
  readonly engine: EngineChoice;
  constructor(options: SandboxOptions) {
    this.options = options;
    this.engine = engineChoice(options.engine ? { PLATFORM_ENGINE: options.engine } : process.env);
    for (let i = 0; i < options.workers; i++) this.slots.push(this.spawn(i));
    this.watchdog = setInterval(
      () => this.check(),
      Math.max(25, Math.min(50, options.hardKillMs / 4)),
    );
    this.watchdog.unref();
  }

  private spawn(index: number, isolatedFor?: string): Slot {
    // Each worker gets its own state block, so a retired worker's can still be read after it is replaced.
    const state = new Float64Array(new SharedArrayBuffer(SHARED_STATE_BYTES));
    const worker = new Worker(sandboxWorkerUrl(), {
      workerData: {
        state: state.buffer,
        maxInstances: this.options.maxInstancesPerWorker ?? 10_000,
        instanceBudgetBytes: instanceBudgetBytes(this.options),
        limits: this.options.limits,
        memoryBytes: workerMemoryBytes(this.options),
        fetchPolicy: this.options.fetchPolicy,
        engine: this.engine,
      },
      // Generous V8 limits for the thread itself: guest memory lives in the capped WASM memory.
      resourceLimits: {
        maxOldGenerationSizeMb: 512,
        ...(this.engine.name === 'own' ? { stackSizeMb: OWN_ENGINE_NATIVE_STACK_MB } : {}),
      },
      execArgv: sandboxWorkerExecArgv(),
    });
    // Held (ref) while it starts and while a call is in flight, so that a caller awaiting it keeps the
    // process alive (Deno ends a process whose only work waits on an unref'd worker); idle, it is not.
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
            if (!slot.pending.size) worker.unref();
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
      if (msg.t === 'host-call') return answerHostCall(slot, msg);
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
    if (!slot.pending.size) slot.worker.unref();
    if (result.cpuMs !== undefined) slot.callMs += (result.cpuMs - slot.callMs) / 16;
    if (result.response?.streaming)
      result.response = { ...result.response, ...streamIn(slot, id, p.onHostCall) };
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

  /** Ends the workers the watchdog finds overdue (watchdog.ts). */
  private check(): void {
    for (const slot of this.allSlots()) {
      const overdue = overdueStretch(slot, this.options.hardKillMs);
      if (overdue) this.retire(slot, overdue.reason, overdue.error);
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
    deadline: number,
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
        deadline,
        wallMs: inv.limits.wallMs,
        onHostCall,
      });
      if (slot.pending.size === 1) slot.worker.ref();
      slot.sent++;
      slot.outbox.push(encodeInvocation(inv), inv.body ? [inv.body] : []);
    });
  }

  /** Never throws: every failure is an InvocationResult the caller turns into runtime_error. */
  async invoke(input: InvokeInput): Promise<InvocationResult> {
    const releaseId = input.release.releaseId;
    const wallMs = input.limits?.wallMs ?? this.options.limits.wallMs;
    // the wall clock runs from here: waiting for a turn or for a retry counts in the call's time
    const deadline = performance.now() + wallMs;
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
      const result = await this.invokeOnce(input, deadline);
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

  private async invokeOnce(input: InvokeInput, deadline: number): Promise<InvocationResult> {
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
    let sources: Record<string, string> | undefined,
      bytecode: Promise<Uint8Array | undefined> | undefined;
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
        if (needSources) bytecode ??= input.loadBytecode?.().catch(() => undefined);
        if (needSources) sources ??= await input.loadSources();
        // One literal, not spreads: spreads cost a trivial server call measurably more main-thread
        // CPU under load (`bench:origin`).
        const release: Invocation['release'] = { releaseId, entry: input.release.entry };
        if (needSources) release.sources = sources;
        if (needSources && (await bytecode)) release.bytecode = await bytecode;
        // a call moved off a thread that another call's guest code held gets a moment more to run:
        // it never ran there, and the margin is what the limit allows past its end
        const left = Math.max(
          attempt > 0 ? WALL_MARGIN_MS : 0,
          Math.floor(deadline - performance.now()),
        );
        if (left <= 0)
          return {
            ok: false,
            error: { kind: 'timeout', message: `wall-clock limit reached (${limits.wallMs} ms)` },
          };
        const inv: Invocation = {
          id: this.nextId++,
          handler: input.handler,
          input: callInput,
          app: input.app,
          flags: input.flags,
          secrets: input.secrets,
          // the worker's own timer gets what is left of the call's time
          limits: left < limits.wallMs ? { ...limits, wallMs: left } : limits,
          release,
          compile: input.compile === true,
        };
        // The body is transferred to the worker, so each attempt sends its own copy.
        if (input.request.body) inv.body = input.request.body.slice(0);
        result = await this.send(slot, inv, performance.now() + left, input.onHostCall);
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
    const live = [...this.allSlots()].filter((s) => s.alive);
    return poolStats(this.counters, live, this.fair.waiting());
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
