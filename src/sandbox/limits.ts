/**
 * Limits inside a worker: guest code runs in segments timed against its call's CPU budget (the
 * thread's CPU time, see cpu-clock.ts; the runtime's interrupt handler stops it), a release's
 * memory is measured after calls, and failures are sorted into the kinds the pool and the owner see.
 */
import { INSTANCE_BYTES, RUNNING_ID, RUNNING_SINCE, WASM_BYTES } from './shared-state.ts';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';
import { TIME_ORIGIN, type FailureKind } from './protocol.ts';
import type { Call, Instance, WorkerState } from './worker-state.ts';
import { billedMs, cpuClock } from './cpu-clock.ts';
import { executePendingJobs } from './fast-calls.ts';

/** Loading a module's top-level code has its own, larger budget than a call. */
export function loadBudgetMs(cpuMs: number): number {
  return Math.max(250, cpuMs * 5);
}

/** An error message that means the WASM module itself is broken. */
export function isPoison(message: string): boolean {
  return /out of memory|stack overflow|call stack|Aborted|unreachable|memory access out of bounds/i.test(
    message,
  );
}

/** The kind a failure is reported as, from what the error says. */
export function failureKind(kind: FailureKind, message: string): FailureKind {
  return /out of memory/i.test(message)
    ? 'memory'
    : /stack overflow|call stack/i.test(message)
      ? 'stack'
      : /interrupted/i.test(message)
        ? 'timeout'
        : kind;
}

/**
 * The thread's CPU time, read at wall-clock time `now`; a segment starts from a reading at most
 * `REUSE_MS` old when there is one. A read is a system call where `threadCpuUsage` is missing (a
 * noticeable share of a trivial call), so under load the calls of one millisecond share the first
 * one's reading. A segment started from an older reading is billed at most that much more CPU (the
 * thread's CPU between the reading and the start), within the tick `billedMs` adds anyway, and
 * never more than its wall time.
 */
const REUSE_MS = 1;
const lastReading = { wall: -Infinity, cpu: 0 };
function readCpu(now: number): number {
  lastReading.cpu = cpuClock().now();
  lastReading.wall = now;
  return lastReading.cpu;
}
/** For a segment's start: a recent reading, or a new one. */
function cpuAt(now: number): number {
  return now - lastReading.wall < REUSE_MS ? lastReading.cpu : readCpu(now);
}

/**
 * CPU time the running segment of `call` has used so far, as billed (see `billedMs`). A segment
 * shorter on the wall clock than the CPU clock's step is billed its wall time whatever the CPU clock
 * says (`billedMs` is the smaller of the two, and CPU time plus a step is more), so the clock is read
 * only for longer ones (few: a trivial call's one segment takes tens of microseconds).
 */
function segmentBilledMs(call: Call): number {
  const clock = cpuClock();
  const now = performance.now();
  const wallMs = now - call.segmentStart;
  if (wallMs <= clock.stepMs) return wallMs;
  return billedMs(clock, wallMs, readCpu(now) - call.segmentCpuStart);
}

/** Whether guest code of `inst` running now has used its call's CPU budget (and marks the call so). */
export function overCpuBudget(inst: Instance): boolean {
  const call = inst.current;
  if (!call || inst.platformWork) return false;
  if (call.cpuExceeded) return true;
  // wall-clock time first (cheap): the thread's CPU time cannot have grown more than it
  const budget = call.inv.limits.cpuMs;
  if (call.cpuUsedMs + (performance.now() - call.segmentStart) <= budget) return false;
  if (call.cpuUsedMs + segmentBilledMs(call) <= budget) return false;
  call.cpuExceeded = true;
  return true;
}

/**
 * Stops guest code once its call has used its CPU budget. QuickJS asks after a count of its own
 * operations, which a loop around a host function that works for milliseconds (encoding megabytes,
 * a digest) reaches only after seconds: host functions ask too (`installHost`).
 */
export function installInterrupt(inst: Instance): void {
  inst.runtime.setInterruptHandler(() => overCpuBudget(inst));
}

/**
 * Runs platform code (a chunk of the prelude loading) inside a call's segment without billing it
 * to the app: it is not interrupted, and its time is taken off the call's CPU.
 */
export function platformWork<T>(inst: Instance, fn: () => T): T {
  if (inst.platformWork) return fn(); // nested (a chunk loading another): the outer one takes the time off
  const started = performance.now();
  const startedCpu = cpuClock().now();
  inst.platformWork = true;
  try {
    return fn();
  } finally {
    inst.platformWork = false;
    if (inst.current) {
      inst.current.segmentStart += performance.now() - started;
      inst.current.segmentCpuStart += cpuClock().now() - startedCpu;
    }
  }
}

/** What a call over its CPU budget fails with (a `timeout` by its kind). */
function overBudget(call: Call): JobFailure {
  const subtle = call.subtleMs ? `, ${Math.round(call.subtleMs)} ms of it in crypto.subtle` : '';
  return new JobFailure(
    `InternalError: interrupted (the call used its ${call.inv.limits.cpuMs} ms of CPU${subtle})`,
  );
}

/**
 * Runs guest code (a segment) under the CPU budget of `call`, telling the pool's watchdog while it
 * runs. A call over its budget that has had crypto.subtle work done for it (billed between
 * segments, see subtle.ts) gets no new segment; for any other call the interrupt alone decides, as
 * before (see "Limits" in docs/decisions/sandbox.md on failing calls between segments).
 */
export function segment<T>(state: WorkerState, inst: Instance, call: Call, fn: () => T): T {
  if (call.subtleMs !== undefined && call.cpuUsedMs > call.inv.limits.cpuMs) {
    call.cpuExceeded = true;
    throw overBudget(call);
  }
  state.outbox.flushUnlessOnly(inst.releaseId);
  inst.current = call;
  call.segmentStart = performance.now();
  call.segmentCpuStart = cpuAt(call.segmentStart);
  state.shared[RUNNING_SINCE] = TIME_ORIGIN + call.segmentStart; // epoch ms, to the microsecond (the pool weighs short stretches)
  state.shared[RUNNING_ID] = call.inv.id;
  let out: T;
  try {
    out = fn();
  } finally {
    state.shared[RUNNING_SINCE] = 0;
    state.shared[RUNNING_ID] = 0;
    state.busyMs += performance.now() - call.segmentStart;
    call.cpuUsedMs += segmentBilledMs(call);
    inst.current = undefined;
  }
  // The interrupt can land inside a promise job whose rejection nobody observes (a `then` callback):
  // the call would then wait for its wall-clock limit. It is over now.
  if (call.cpuExceeded) {
    // what the segment returned is released here: its caller gets the failure instead
    const r = out as { value?: { dispose?(): void }; error?: { dispose?(): void } } | undefined;
    r?.value?.dispose?.();
    r?.error?.dispose?.();
    throw overBudget(call);
  }
  return out;
}

/**
 * Bytes an instance's runtime holds. QuickJS's own memory limit only refuses single allocations
 * above it (large strings and buffers never add up, see quickjs-emscripten#271), but its usage
 * report counts them, so the per-instance cap is enforced here, after calls.
 */
export function usedBytes(inst: Instance): number {
  // computeMemoryUsage() builds its answer in the runtime's "system" context; lend it ours instead
  // of letting it create a second context in every instance.
  (inst.runtime as unknown as { context?: QuickJSContext }).context ??= inst.context;
  using report = inst.runtime.computeMemoryUsage();
  using used = inst.context.getProp(report, 'memory_used_size');
  return inst.context.getNumber(used);
}

/**
 * CPU billed to an instance's calls between two measures of its memory. Keeping memory costs CPU in
 * proportion to the bytes (QuickJS zeroes new buffers and writes strings; a host answer is copied in
 * within the call's billed time), so this bounds what an instance can add unmeasured: what this much
 * guest work can allocate, whether in one call or spread over many cheap ones.
 */
export const MEASURE_AFTER_CPU_MS = 2;

/**
 * Whether `inst` went over its memory cap. Measuring walks every object of the instance (tens to
 * hundreds of microseconds), so it happens when allocating a lot was possible: the instance's calls
 * used MEASURE_AFTER_CPU_MS of CPU since the last measure, or the worker's WASM memory grew.
 */
export function overMemoryCap(state: WorkerState, inst: Instance, call: Call): string | undefined {
  inst.cpuSinceMeasureMs += call.cpuUsedMs;
  const wasmBytes = state.wasmMemory.buffer.byteLength;
  if (inst.cpuSinceMeasureMs < MEASURE_AFTER_CPU_MS && wasmBytes === inst.measuredAtWasmBytes)
    return undefined;
  inst.cpuSinceMeasureMs = 0;
  inst.measuredAtWasmBytes = wasmBytes;
  const used = usedBytes(inst);
  state.shared[INSTANCE_BYTES]! += used - inst.usedBytes;
  state.shared[WASM_BYTES] = wasmBytes;
  inst.usedBytes = used;
  const limit = call.inv.limits.memoryBytes;
  if (used <= limit) return undefined;
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  return `memory limit exceeded: ${mib(used)} MiB in use, the limit is ${mib(limit)} MiB`;
}

/**
 * Guest code failed outside any promise (the CPU limit's interrupt, out of memory, a stack overflow)
 * while promise jobs ran: the call ends with it, by its message's kind.
 */
export class JobFailure extends Error {
  readonly guestStack?: string;
  constructor(message: string, guestStack?: string) {
    super(message);
    this.guestStack = guestStack;
  }
}

/** Runs the guest's pending promise jobs; a job that fails beyond the promise machinery throws a JobFailure. */
export function runJobs(inst: Instance): void {
  if (!inst.runtime.hasPendingJob()) return;
  const error = executePendingJobs(inst.context, inst.runtime);
  if (!error) return;
  const e = errorText(inst.context, error);
  error.dispose();
  throw new JobFailure(e.message, e.stack);
}

/** An error handle as a message and the guest's stack. */
/** What an error about a part the engine cannot give adds, so the event says why. */
function divergence(message: string): string | undefined {
  if (/^ReferenceError: '?WebAssembly'? is not defined/.test(message))
    return ' (app code runs in QuickJS, which has no WebAssembly: use a JavaScript build of the library)';
  return undefined;
}

export function errorText(
  ctx: QuickJSContext,
  handle: QuickJSHandle,
): { message: string; stack?: string } {
  try {
    const v = ctx.dump(handle) as unknown;
    if (v && typeof v === 'object') {
      const e = v as { name?: string; message?: string; stack?: string };
      const said = `${e.name ?? 'Error'}: ${e.message ?? ''}`;
      return { message: said + (divergence(said) ?? ''), stack: e.stack };
    }
    return { message: String(v) };
  } catch {
    return { message: 'unknown error' };
  }
}
