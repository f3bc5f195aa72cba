/**
 * A sandbox worker thread: one QuickJS WASM module, one QuickJS runtime (own heap, memory and
 * stack caps) per release, kept warm in an LRU. The main thread sends invocations and may
 * terminate this thread at any time (watchdog). An out-of-memory, a stack overflow or an abort
 * poisons the WASM module, so after answering we exit and the pool starts a fresh worker.
 *
 * Shared memory tells the pool when guest code started running (its watchdog catches a guest stuck
 * inside one long instruction) and which invocation this worker began last.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten';
import { redactLog, scrubString, secretForms, type LogEntry } from './redact.ts';
import { Outbox } from './outbox.ts';
import type { FailureKind, Invocation, InvocationResult, WorkerInbound, WorkerOutbound } from './protocol.ts';

const PRELUDE = readFileSync(new URL('./prelude.js', import.meta.url), 'utf8');
const port = parentPort!;
/** [0] when guest code started running (0 = idle), [1] id of the last invocation begun; read by the pool. */
const state = new Float64Array(workerData.state as SharedArrayBuffer);
const MAX_INSTANCES = workerData.maxInstances as number;

type Instance = {
  releaseId: string;
  /** `__dispatch`, looked up once. */
  dispatch: QuickJSHandle;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  handlers: QuickJSHandle;
  /** The invocation whose guest code is running now, for host functions. */
  current: Call | undefined;
  timers: Map<number, { timer: ReturnType<typeof setTimeout>; call: Call }>;
  inflight: number;
  /** Calls answered, and the worker's WASM memory size when this instance's memory was last measured. */
  calls: number;
  measuredAtWasmBytes: number;
  /** Out of service (timed out, or over its memory cap): disposed once no call holds its handles. */
  retired?: boolean;
};

type Call = {
  inv: Invocation;
  hostCalls: number;
  logs: LogEntry[];
  secretsRead: Set<string>;
  cpuUsedMs: number;
  segmentStart: number;
  done: boolean;
  settle?: () => void;
};

class Poisoned extends Error {}

export function loadBudgetMs(cpuMs: number): number {
  return Math.max(250, cpuMs * 5);
}
/** A normaliser result that makes the loader fail with this message (its own errors lose theirs). */
const DENIED = '\u0001denied:'; // control characters never occur in release paths; NUL would end the C string

let quickjs: QuickJSWASMModule;
/**
 * This worker's WASM memory, shared by all its instances and capped: when a guest's allocations
 * reach the cap, QuickJS fails them with "out of memory" instead of growing the host process.
 */
const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: (workerData.memoryBytes as number) / 65536 });
const instances = new Map<string, Instance>();
let poisoned = false;

/**
 * Outgoing messages cross in one batch per event-loop turn. The batch is sent early, before guest
 * code of another release runs, so a guest that gets this worker terminated can only take its own
 * release's finished answers with it, never another app's.
 */
const outbox = new Outbox<WorkerOutbound>(
  (msg, transfer) => port.postMessage(msg, transfer),
  (msgs) => ({ t: 'batch', msgs }),
);

function isPoison(message: string): boolean {
  return /out of memory|stack overflow|call stack|Aborted|unreachable|memory access out of bounds/i.test(message);
}

function errorText(ctx: QuickJSContext, handle: QuickJSHandle): { message: string; stack?: string } {
  try {
    const v = ctx.dump(handle) as unknown;
    if (v && typeof v === 'object') {
      const e = v as { name?: string; message?: string; stack?: string };
      return { message: `${e.name ?? 'Error'}: ${e.message ?? ''}`, stack: e.stack };
    }
    return { message: String(v) };
  } catch {
    return { message: 'unknown error' };
  }
}

/**
 * Bytes an instance's runtime holds. QuickJS's own memory limit only refuses single allocations
 * above it (large strings and buffers never add up, see quickjs-emscripten#271), but its usage
 * report counts them, so the per-instance cap is enforced here, after calls.
 */
function usedBytes(inst: Instance): number {
  // computeMemoryUsage() builds its answer in the runtime's "system" context; lend it ours instead
  // of letting it create a second context in every instance.
  (inst.runtime as unknown as { context?: QuickJSContext }).context ??= inst.context;
  const report = inst.runtime.computeMemoryUsage();
  const used = inst.context.getProp(report, 'memory_used_size');
  try {
    return inst.context.getNumber(used);
  } finally {
    used.dispose();
    report.dispose();
  }
}

/**
 * Whether `inst` went over its memory cap. Measuring costs tens of microseconds, so it happens when
 * allocating a lot was possible: the call used a millisecond of CPU or more, the worker's WASM memory
 * grew, or every 32nd call (which bounds what cheap calls can pile up between checks; every 8th cost ~30 µs
 * a call on average, since the report walks every object).
 */
function overMemoryCap(inst: Instance, call: Call): string | undefined {
  inst.calls++;
  const wasmBytes = wasmMemory.buffer.byteLength;
  if (call.cpuUsedMs < 1 && wasmBytes === inst.measuredAtWasmBytes && inst.calls % 32 !== 0) return undefined;
  inst.measuredAtWasmBytes = wasmBytes;
  const used = usedBytes(inst);
  const limit = call.inv.limits.memoryBytes;
  if (used <= limit) return undefined;
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  return `memory limit exceeded: ${mib(used)} MiB in use, the limit is ${mib(limit)} MiB`;
}

/** Takes an instance out of service: new calls get a new one; it is disposed once idle. */
function retire(inst: Instance): void {
  inst.retired = true;
  if (instances.get(inst.releaseId) === inst) instances.delete(inst.releaseId);
}

/** Disposes a retired instance once no call is running in it (its handles are all released). */
function disposeIfRetired(inst: Instance): void {
  if (inst.retired && inst.inflight === 0 && inst.runtime.alive && !poisoned) disposeInstance(inst);
}

/** A call that finished: answered, unless its instance is now over the memory cap (then retired). */
function succeed(inst: Instance, call: Call, result: InvocationResult, transfer: ArrayBuffer[] = []): void {
  inst.inflight--;
  const over = inst.retired ? undefined : overMemoryCap(inst, call);
  if (over === undefined) return finish(call, result, transfer);
  // The WASM module itself is fine: only this instance goes, and its memory is returned.
  retire(inst);
  finish(call, { ok: false, error: { kind: 'memory', message: over } });
}

/** Runs guest code (a segment) under the CPU budget of `call`; the interrupt handler stops it. */
function segment<T>(inst: Instance, call: Call, fn: () => T): T {
  outbox.flushUnlessOnly(inst.releaseId);
  inst.current = call;
  call.segmentStart = performance.now();
  state[0] = Date.now();
  state[2] = call.inv.id;
  try {
    return fn();
  } finally {
    state[0] = 0;
    state[2] = 0;
    call.cpuUsedMs += performance.now() - call.segmentStart;
    inst.current = undefined;
  }
}

function installHost(inst: Instance): void {
  const { context: ctx } = inst;
  const host = ctx.newObject();
  const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const f = ctx.newFunction(name, (...args) => {
      try {
        return impl(...args);
      } catch (err) {
        return { error: ctx.newError({ name: 'TypeError', message: (err as Error).message }) };
      }
    });
    ctx.setProp(host, name, f);
    f.dispose();
  };
  const str = (h: QuickJSHandle | undefined) => (h === undefined ? undefined : ctx.typeof(h) === 'undefined' ? undefined : ctx.getString(h));
  const bytes = (h: QuickJSHandle) => {
    const lt = ctx.getArrayBuffer(h);
    try {
      return Buffer.from(lt.value);
    } finally {
      lt.dispose();
    }
  };
  // Strings that may hold NUL cross the boundary as JSON text: QuickJS C strings end at the first NUL.
  fn('utf8Encode', (s) => {
    const b = Buffer.from(JSON.parse(ctx.getString(s)) as string, 'utf8');
    return ctx.newArrayBuffer(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  });
  fn('utf8Decode', (ab, fatal, ignoreBom) => {
    const text = new TextDecoder('utf-8', { fatal: ctx.dump(fatal) === true, ignoreBOM: ctx.dump(ignoreBom) === true }).decode(bytes(ab));
    return ctx.newString(JSON.stringify(text));
  });
  fn('urlParse', (href, base) => {
    const b = str(base);
    let u: URL;
    try {
      u = b === undefined ? new URL(ctx.getString(href)) : new URL(ctx.getString(href), b);
    } catch {
      return ctx.undefined;
    }
    return ctx.newString(JSON.stringify(urlParts(u)));
  });
  fn('urlSet', (href, part, value) => {
    const u = new URL(ctx.getString(href));
    const p = ctx.getString(part) as 'href';
    try {
      u[p] = ctx.getString(value);
    } catch {
      return ctx.undefined;
    }
    return ctx.newString(JSON.stringify(urlParts(u)));
  });
  fn('qsParse', (s) => ctx.newString(JSON.stringify([...new URLSearchParams(ctx.getString(s))])));
  fn('qsStringify', (s) => ctx.newString(new URLSearchParams(JSON.parse(ctx.getString(s)) as [string, string][]).toString()));
  fn('atob', (s) => {
    const input = ctx.getString(s).replace(/[\t\n\f\r ]/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(input) || input.length % 4 === 1) throw new Error('atob: invalid base64');
    return ctx.newString(JSON.stringify(Buffer.from(input, 'base64').toString('latin1')));
  });
  fn('btoa', (s) => {
    const input = JSON.parse(ctx.getString(s)) as string;
    if (/[^\u0000-\u00ff]/.test(input)) throw new Error('btoa: the string has characters outside Latin1');
    return ctx.newString(Buffer.from(input, 'latin1').toString('base64'));
  });
  fn('randomBytes', (n) => {
    const b = randomBytes(Math.min(65536, Math.max(0, ctx.getNumber(n))));
    return ctx.newArrayBuffer(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  });
  fn('randomUUID', () => ctx.newString(randomUUID()));
  fn('b64encode', (ab) => ctx.newString(bytes(ab).toString('base64')));
  fn('now', () => ctx.newNumber(performance.now()));
  fn('secret', (name) => {
    const call = inst.current;
    const n = ctx.getString(name);
    const value = call?.inv.secrets[n];
    if (value === undefined) return ctx.undefined;
    call!.secretsRead.add(n);
    return ctx.newString(JSON.stringify(value));
  });
  fn('log', (level, message, metadata) => {
    const call = inst.current;
    if (!call || call.logs.length >= 200) return ctx.undefined;
    let meta: unknown = undefined;
    const raw = str(metadata);
    if (raw !== undefined) {
      try {
        meta = JSON.parse(raw);
      } catch {
        meta = raw;
      }
    }
    call.logs.push({ level: ctx.getString(level) as LogEntry['level'], message: ctx.getString(message), metadata: meta });
    return ctx.undefined;
  });
  fn('console', (level, parts) => {
    const call = inst.current;
    if (!call || call.logs.length >= 200) return ctx.undefined;
    let list: unknown[];
    try {
      list = JSON.parse(ctx.getString(parts)) as unknown[];
    } catch {
      list = ['[unprintable console arguments]'];
    }
    call.logs.push({ level: ctx.getString(level) as LogEntry['level'], message: '', parts: Array.isArray(list) ? list : [String(list)] });
    return ctx.undefined;
  });
  fn('setTimer', (id, ms) => {
    const call = inst.current;
    if (!call) return ctx.undefined;
    const timerId = ctx.getNumber(id);
    const delay = Math.min(ctx.getNumber(ms), call.inv.limits.wallMs);
    const timer = setTimeout(() => fireTimer(inst, timerId), delay);
    inst.timers.set(timerId, { timer, call });
    return ctx.undefined;
  });
  fn('clearTimer', (id) => {
    const t = inst.timers.get(ctx.getNumber(id));
    if (t) clearTimeout(t.timer);
    inst.timers.delete(ctx.getNumber(id));
    return ctx.undefined;
  });
  fn('call', (method, args) => {
    const call = inst.current;
    if (!call || call.done) throw new Error('host calls are only possible during a call');
    if (call.hostCalls >= MAX_HOST_CALLS) throw new Error(`at most ${MAX_HOST_CALLS} platform calls per invocation`);
    call.hostCalls++;
    const deferred = ctx.newPromise();
    const callId = nextHostCallId++;
    hostCalls.set(callId, { deferred, inst, call });
    outbox.push({ t: 'host-call', invocationId: call.inv.id, callId, method: ctx.getString(method), args: ctx.getString(args) }, [], call.inv.release.releaseId);
    return deferred.handle;
  });
  ctx.setProp(ctx.global, '__host', host);
  host.dispose();
}

const MAX_HOST_CALLS = 1000;
let nextHostCallId = 1;
const hostCalls = new Map<number, { deferred: ReturnType<QuickJSContext['newPromise']>; inst: Instance; call: Call }>();

/** The main thread answered a host call: settle the guest's promise and run what it unblocks. */
function hostResult(msg: Extract<WorkerInbound, { t: 'host-result' }>): void {
  const pending = hostCalls.get(msg.callId);
  if (!pending) return;
  hostCalls.delete(msg.callId);
  const { deferred, inst, call } = pending;
  if (call.done) {
    deferred.dispose();
    return;
  }
  const ctx = inst.context;
  try {
    segment(inst, call, () => {
      if (msg.ok) {
        const v = ctx.newString(msg.value ?? 'null');
        deferred.resolve(v);
        v.dispose();
      } else {
        const e = ctx.newError({ name: 'PlatformError', message: JSON.stringify(msg.error ?? { code: 'internal_error', message: 'failed' }) });
        deferred.reject(e);
        e.dispose();
      }
      inst.runtime.executePendingJobs();
    });
  } catch (err) {
    failCall(inst, call, 'crash', (err as Error).message);
    return;
  } finally {
    deferred.dispose();
  }
  call.settle?.();
}

function urlParts(u: URL) {
  const { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash } = u;
  return { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash };
}

function fireTimer(inst: Instance, id: number): void {
  const t = inst.timers.get(id);
  if (!t || t.call.done) return;
  inst.timers.delete(id);
  const { context: ctx } = inst;
  const fire = ctx.getProp(ctx.global, '__fireTimer');
  const arg = ctx.newNumber(id);
  try {
    const r = segment(inst, t.call, () => {
      const res = ctx.callFunction(fire, ctx.undefined, arg);
      inst.runtime.executePendingJobs();
      return res;
    });
    if (r.error) {
      // An exception in a timer callback ends the invocation that scheduled it.
      const e = errorText(ctx, r.error);
      r.error.dispose();
      t.call.settle?.();
      failCall(inst, t.call, 'exception', e.message, e.stack);
      return;
    }
    r.value.dispose();
  } catch (err) {
    failCall(inst, t.call, 'crash', (err as Error).message);
    return;
  } finally {
    fire.dispose();
    arg.dispose();
  }
  t.call.settle?.();
}

/**
 * A runtime with the host functions installed and the prelude evaluated, for no app yet.
 * Compiling the prelude is most of what a new instance costs (~10 ms), so one blank instance is
 * kept ready and a release's first request takes it.
 */
function blankInstance(limits: { memoryBytes: number; stackBytes: number }): Instance {
  const runtime = quickjs.newRuntime({ memoryLimitBytes: limits.memoryBytes, maxStackSizeBytes: limits.stackBytes });
  const context = runtime.newContext();
  const inst: Instance = { releaseId: '', dispatch: context.undefined, runtime, context, handlers: context.undefined, current: undefined, timers: new Map(), inflight: 0, calls: 0, measuredAtWasmBytes: 0 };
  runtime.setInterruptHandler(() => {
    const call = inst.current;
    if (!call) return false;
    return call.cpuUsedMs + (performance.now() - call.segmentStart) > call.inv.limits.cpuMs;
  });
  installHost(inst);
  // The prelude is platform code, not guest code: no app's budget applies to it.
  const prelude = context.evalCode(PRELUDE, '<platform prelude>');
  if (prelude.error) {
    const e = errorText(context, prelude.error);
    prelude.error.dispose();
    disposeInstance(inst);
    throw new Error(`prelude failed: ${e.message}`);
  }
  prelude.value.dispose();
  return inst;
}

let spare: Instance | undefined;
let spareTimer: ReturnType<typeof setTimeout> | undefined;
let spareLimits = { memoryBytes: 64 * 1024 * 1024, stackBytes: 512 * 1024 };
/** When this worker last received or answered something. */
let lastActivity = 0;
const QUIET_MS = 20;
const MAX_SPARE_DELAY_MS = 1000;

/**
 * Makes the next blank instance when the worker has been quiet for a moment, so the ~10 ms it
 * takes does not land on a request that follows; under steady traffic, after a second anyway.
 */
function refillSpare(): void {
  if (spare || spareTimer || poisoned) return;
  const wanted = performance.now();
  const attempt = () => {
    spareTimer = undefined;
    if (spare || poisoned) return;
    const now = performance.now();
    if (now - lastActivity < QUIET_MS && now - wanted < MAX_SPARE_DELAY_MS) {
      spareTimer = setTimeout(attempt, QUIET_MS);
      return;
    }
    outbox.flush();
    spare = blankInstance(spareLimits);
  };
  spareTimer = setTimeout(attempt, QUIET_MS);
}

function newInstance(inv: Invocation): Instance {
  const sources = inv.release.sources!;
  spareLimits = { memoryBytes: inv.limits.memoryBytes, stackBytes: inv.limits.stackBytes };
  let inst = spare;
  spare = undefined;
  if (inst) {
    inst.runtime.setMemoryLimit(inv.limits.memoryBytes);
    inst.runtime.setMaxStackSize(inv.limits.stackBytes);
  } else {
    inst = blankInstance(inv.limits);
  }
  refillSpare();
  inst.releaseId = inv.release.releaseId;
  const { runtime, context } = inst;
  runtime.setModuleLoader(
    (name) => {
      if (name.startsWith(DENIED)) return { error: new Error(name.slice(DENIED.length)) };
      const source = sources[name];
      if (source === undefined) return { error: new Error(`Cannot find module "${name}" in this release`) };
      return source;
    },
    (base, requested) => {
      if (!requested.startsWith('./') && !requested.startsWith('../')) {
        return `${DENIED}Cannot import "${requested}": only relative imports of release files are allowed (no host modules, no packages)`;
      }
      const baseDir = base.includes('/') ? base.slice(0, base.lastIndexOf('/') + 1) : '';
      const parts: string[] = [];
      for (const seg of (baseDir + requested).split('/')) {
        if (seg === '' || seg === '.') continue;
        if (seg === '..') {
          if (!parts.length) return `${DENIED}Cannot import "${requested}": it leaves the release`;
          parts.pop();
        } else parts.push(seg);
      }
      const resolved = parts.join('/');
      if (!(resolved in sources)) return `${DENIED}Cannot find module "${requested}" (resolved to ${resolved}) in this release`;
      return resolved;
    },
  );
  // Loading the module's top-level code has its own, larger budget: a cold worker's first
  // evaluation is slow, but a top-level infinite loop is still stopped.
  const loadLimits = { ...inv.limits, cpuMs: loadBudgetMs(inv.limits.cpuMs) };
  const loadCall: Call = { inv: { ...inv, limits: loadLimits }, hostCalls: 0, logs: [], secretsRead: new Set(), cpuUsedMs: 0, segmentStart: 0, done: false };
  try {
    const setApp = context.getProp(context.global, '__setApp');
    const appJson = context.newString(JSON.stringify(inv.app));
    const flags = context.newString(JSON.stringify(inv.flags ?? { appUsers: false, publicStores: [] }));
    const set = context.callFunction(setApp, context.undefined, appJson, flags);
    setApp.dispose();
    appJson.dispose();
    flags.dispose();
    if (set.error) {
      set.error.dispose();
      throw new Error('could not set up ctx');
    }
    set.value.dispose();
    inst.dispatch = context.getProp(context.global, '__dispatch');
    const entry = inv.release.entry;
    const loaded = segment(inst, loadCall, () => {
      const r = context.evalCode(sources[entry]!, entry, { type: 'module' });
      runtime.executePendingJobs();
      return r;
    });
    if (loaded.error) {
      const e = errorText(context, loaded.error);
      loaded.error.dispose();
      throw new LoadError(e.message, e.stack);
    }
    let ns = loaded.value;
    const state = context.getPromiseState(ns);
    if (state.type !== 'fulfilled' || state.notAPromise === false) {
      // Top-level await: the module namespace arrives through a promise.
      if (state.type === 'pending') {
        ns.dispose();
        throw new LoadError('The server module is still waiting on top-level await; it must finish loading without timers or I/O.');
      }
      if (state.type === 'rejected') {
        const e = errorText(context, state.error);
        state.error.dispose();
        ns.dispose();
        throw new LoadError(e.message, e.stack);
      }
      if (state.type === 'fulfilled' && !state.notAPromise) {
        ns.dispose();
        ns = state.value;
      }
    }
    inst.handlers = context.getProp(ns, 'default');
    ns.dispose();
  } catch (err) {
    disposeInstance(inst);
    if (err instanceof LoadError) throw err;
    if (isPoison((err as Error).message)) throw new Poisoned((err as Error).message);
    throw err;
  }
  return inst;
}

class LoadError extends Error {
  constructor(
    message: string,
    readonly guestStack?: string,
  ) {
    super(message);
  }
}

function disposeInstance(inst: Instance): void {
  if (instances.get(inst.releaseId) === inst) instances.delete(inst.releaseId);
  for (const t of inst.timers.values()) clearTimeout(t.timer);
  // Guest promises still waiting on the host hold references into the runtime: release them first.
  for (const [id, pending] of hostCalls) {
    if (pending.inst !== inst) continue;
    hostCalls.delete(id);
    pending.deferred.dispose();
  }
  try {
    if (inst.handlers !== inst.context.undefined) inst.handlers.dispose();
    if (inst.dispatch !== inst.context.undefined) inst.dispatch.dispose();
    inst.context.dispose();
    inst.runtime.dispose();
  } catch {
    // A runtime that ran out of memory may not dispose cleanly; the worker is exiting anyway.
    poisoned = true;
  }
}

function instanceFor(inv: Invocation): Instance | 'missing-sources' {
  const existing = instances.get(inv.release.releaseId);
  if (existing) {
    instances.delete(existing.releaseId);
    instances.set(existing.releaseId, existing); // most recently used last
    return existing;
  }
  if (!inv.release.sources) return 'missing-sources';
  const inst = newInstance(inv);
  instances.set(inst.releaseId, inst);
  while (instances.size > MAX_INSTANCES) {
    const oldest = [...instances.values()].find((i) => i.inflight === 0);
    if (!oldest) break;
    disposeInstance(oldest);
  }
  return inst;
}

function finish(call: Call, result: InvocationResult, transfer: ArrayBuffer[] = []): void {
  if (call.done) return;
  call.done = true;
  lastActivity = performance.now();
  if (call.inv.id < 0) return; // the boot warm-up answers no one
  // every secret of the app, not only those read in this call: a module may keep one from an earlier call
  const secretValues = secretForms(Object.values(call.inv.secrets));
  result.logs = call.logs.map((l) => redactLog(l, secretValues));
  if (!result.ok && result.error) {
    result.error.message = scrubString(result.error.message, secretValues);
    if (result.error.stack) result.error.stack = scrubString(result.error.stack, secretValues);
  }
  result.cpuMs = Math.round(call.cpuUsedMs * 100) / 100;
  if (poisoned) result.poisoned = true;
  outbox.push({ t: 'result', id: call.inv.id, result }, transfer, call.inv.release.releaseId);
}

function failCall(inst: Instance | undefined, call: Call, kind: FailureKind, message: string, stack?: string): void {
  const finalKind: FailureKind = /out of memory/i.test(message) ? 'memory' : /stack overflow|call stack/i.test(message) ? 'stack' : /interrupted/i.test(message) ? 'timeout' : kind;
  // QuickJS's own stack check (maxStackSizeBytes) throws an ordinary guest exception and unwinds
  // cleanly: only that instance goes. A stack overflow the host sees (the WASM stack) poisons the module.
  const guestStack = kind === 'exception' && finalKind === 'stack';
  if (!guestStack && (finalKind === 'memory' || finalKind === 'stack' || finalKind === 'crash' || isPoison(message))) poisoned = true;
  if (inst) {
    inst.inflight--;
    // An interrupted or failed runtime is not reused; disposing one that ran out of memory may
    // itself abort the WASM module, which poisons it.
    if (poisoned) instances.delete(inst.releaseId); // the whole module is dropped with the thread
    else if (finalKind === 'timeout' || guestStack) retire(inst); // disposed when invoke() lets go of its handles
  }
  finish(call, { ok: false, error: { kind: finalKind, message, stack }, poisoned });
  // A call parked on a timer or host call (the wall-clock limit) wakes up to release its handles.
  call.settle?.();
}

async function invoke(inv: Invocation): Promise<void> {
  if (poisoned) return; // the pool retries what this worker never began
  state[1] = inv.id;
  const call: Call = { inv, hostCalls: 0, logs: [], secretsRead: new Set(), cpuUsedMs: 0, segmentStart: 0, done: false };
  let inst: Instance | 'missing-sources';
  try {
    inst = instanceFor(inv);
  } catch (err) {
    if (err instanceof LoadError) return finish(call, { ok: false, error: { kind: 'load', message: err.message, stack: err.guestStack } });
    return failCall(undefined, call, err instanceof Poisoned ? 'memory' : 'crash', (err as Error).message);
  }
  if (inst === 'missing-sources') return finish(call, { ok: false, error: { kind: 'missing-sources', message: 'release not loaded in this worker' } });
  if (inv.handler === 'load') {
    // Publish-time check: the module loaded. Report which handlers it exports.
    const names: string[] = [];
    for (const n of ['fetch', 'job', 'webhook']) {
      const h = inst.context.getProp(inst.handlers, n);
      if (inst.context.typeof(h) === 'function') names.push(n);
      h.dispose();
    }
    const parsed = { status: 200, headers: [['x-handlers', names.join(',')]] as [string, string][] };
    inst.inflight++;
    succeed(inst, call, { ok: true, response: parsed });
    return disposeIfRetired(inst);
  }
  const { context: ctx, runtime } = inst;
  inst.inflight++;
  const wall = setTimeout(() => failCall(inst as Instance, call, 'timeout', 'wall-clock limit reached'), inv.limits.wallMs);
  try {
    const kind = ctx.newString(inv.handler);
    const meta = ctx.newString(inv.event ?? `${JSON.stringify({ method: inv.request.method, url: inv.request.url, user: inv.request.user ?? null })}\n${JSON.stringify(inv.request.headers)}`);
    const body = inv.request.body ? ctx.newArrayBuffer(inv.request.body) : ctx.undefined;
    const started = segment(inst, call, () => {
      const r = ctx.callFunction(inst.dispatch, ctx.undefined, inst.handlers, kind, meta, body);
      if (runtime.hasPendingJob()) runtime.executePendingJobs();
      return r;
    });
    kind.dispose();
    meta.dispose();
    if (body !== ctx.undefined) body.dispose();
    if (started.error) {
      const e = errorText(ctx, started.error);
      started.error.dispose();
      return failCall(inst, call, 'exception', e.message, e.stack);
    }
    const promise = started.value;
    // Wait for the guest promise: timers fire segments through fireTimer, which calls settle.
    for (;;) {
      if (call.done) {
        promise.dispose();
        return;
      }
      const state = ctx.getPromiseState(promise);
      if (state.type === 'pending') {
        await new Promise<void>((resolve) => (call.settle = resolve));
        call.settle = undefined;
        continue;
      }
      // For a plain (non-promise) result, state.value is the same handle: dispose it only once.
      if (!(state.type === 'fulfilled' && state.notAPromise)) promise.dispose();
      if (state.type === 'rejected') {
        const e = errorText(ctx, state.error);
        state.error.dispose();
        return failCall(inst, call, 'exception', e.message, e.stack);
      }
      const value = state.value;
      try {
        if (ctx.typeof(value) === 'string') {
          const answer = JSON.parse(ctx.getString(value)) as { status: number; headers: [string, string][]; text: string };
          return succeed(inst, call, { ok: true, response: { status: answer.status, headers: answer.headers, text: answer.text } });
        }
        const missingH = ctx.getProp(value, 'missing');
        const missing = ctx.dump(missingH) === true;
        missingH.dispose();
        if (missing) {
          inst.inflight--;
          return finish(call, { ok: false, error: { kind: 'no-handler', message: `the server module has no ${inv.handler}() handler` } });
        }
        const metaH = ctx.getProp(value, 'meta');
        const bodyH = ctx.getProp(value, 'body');
        const textH = ctx.getProp(value, 'text');
        const response = JSON.parse(ctx.getString(metaH)) as { status: number; headers: [string, string][] };
        let out: ArrayBuffer | undefined;
        let text: string | undefined;
        if (ctx.typeof(textH) === 'string') text = JSON.parse(ctx.getString(textH)) as string;
        else if (ctx.typeof(bodyH) !== 'undefined') {
          const lt = ctx.getArrayBuffer(bodyH);
          out = lt.value.slice().buffer;
          lt.dispose();
        }
        metaH.dispose();
        bodyH.dispose();
        textH.dispose();
        return succeed(inst, call, { ok: true, response: { status: response.status, headers: response.headers, body: out, text } }, out ? [out] : []);
      } finally {
        value.dispose();
      }
    }
  } catch (err) {
    failCall(inst, call, 'crash', (err as Error).message);
  } finally {
    clearTimeout(wall);
    for (const [id, t] of inst.timers) {
      if (t.call === call) {
        clearTimeout(t.timer);
        inst.timers.delete(id);
      }
    }
    disposeIfRetired(inst);
    // A poisoned worker takes no more work; the pool terminates and replaces it.
  }
}

/**
 * One trivial request through the whole path (blank instance, module load, dispatch, answer)
 * before the worker reports ready, so the first real request finds the WASM and V8 code warm.
 */
async function warmUp(): Promise<void> {
  const releaseId = '\u0000warm-up';
  const source = "export default { fetch(request) { return new Response(request.url + request.headers.get('host'), { headers: { 'content-type': 'text/plain' } }); } };";
  await invoke({
    id: -1,
    handler: 'fetch',
    app: { app_id: 'warm-up', origin: 'http://warm-up.invalid', release_id: releaseId },
    release: { releaseId, entry: 'server.js', sources: { 'server.js': source } },
    request: { method: 'GET', url: 'http://warm-up.invalid/', headers: [['host', 'warm-up.invalid']] },
    secrets: {},
    limits: { cpuMs: 1000, wallMs: 5000, ...spareLimits },
  });
  const inst = instances.get(releaseId);
  if (inst) disposeInstance(inst);
  state[1] = 0;
}

function onMessage(msg: WorkerInbound): void {
  lastActivity = performance.now();
  if (msg.t === 'batch') for (const m of msg.msgs) onMessage(m);
  else if (msg.t === 'invoke') void invoke(msg.inv);
  else if (msg.t === 'host-result') hostResult(msg);
  else if (msg.t === 'evict') {
    const inst = instances.get(msg.releaseId);
    if (inst && inst.inflight === 0) disposeInstance(inst);
  }
}
port.on('message', onMessage);

quickjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory }));
if (workerData.limits) spareLimits = { memoryBytes: workerData.limits.memoryBytes, stackBytes: workerData.limits.stackBytes };
await warmUp();
spare = blankInstance(spareLimits);
port.postMessage({ t: 'ready' } satisfies WorkerOutbound);
