/**
 * A call's traffic with guest code beyond its first segment: what a guest value came to (at once,
 * or once its promise settles while timers and host answers run), and the two streams that cross
 * the boundary chunk by chunk (a streamed answer the visitor pulls, a request body the host reads).
 */
import type { QuickJSHandle } from 'quickjs-emscripten';
import { errorText, runJobs, segment } from './limits.ts';
import { MAX_STREAMED_BYTES, type FailureKind, type InvocationResult } from './protocol.ts';
import type { Call, Instance, WorkerState } from './worker-state.ts';

/** How a call ends and waits, from calls.ts: what the pump and a pull need of it. */
export type Finisher = {
  state: WorkerState;
  /** Resolves at the next wake of `call`. */
  woken(call: Call): Promise<void>;
  succeed(inst: Instance, call: Call, result: InvocationResult, transfer?: ArrayBuffer[]): void;
  failCall(
    inst: Instance | undefined,
    call: Call,
    kind: FailureKind,
    message: string,
    stack?: string,
  ): void;
  failGuest(inst: Instance, call: Call, err: unknown): void;
};

/** What a guest call came to: its (awaited) value or its error; undefined once the call is over. */
export type Outcome =
  | { value: QuickJSHandle }
  | { error: { message: string; stack?: string } }
  | undefined;

/** A guest value's outcome as it stands: settled, `pending`, or undefined once the call is over. */
export function settled(inst: Instance, call: Call, promise: QuickJSHandle): Outcome | 'pending' {
  const ctx = inst.context;
  if (call.done) {
    promise.dispose();
    return undefined;
  }
  const p = ctx.getPromiseState(promise);
  if (p.type === 'pending') return 'pending';
  // For a plain (non-promise) result, p.value is the same handle: dispose it only once.
  if (!(p.type === 'fulfilled' && p.notAPromise)) promise.dispose();
  if (p.type === 'rejected') {
    const e = errorText(ctx, p.error);
    p.error.dispose();
    return { error: e };
  }
  return { value: p.value };
}

/** Waits for a guest promise: timers and host answers run segments meanwhile and wake the call. */
async function settleGuest(
  f: Finisher,
  inst: Instance,
  call: Call,
  promise: QuickJSHandle,
): Promise<Outcome> {
  for (;;) {
    const s = settled(inst, call, promise);
    if (s !== 'pending') return s;
    await f.woken(call);
  }
}

/**
 * What a segment's call into the guest came to: at once when it is settled already (a handler that
 * answered synchronously is answered in the same turn, with no promise hop), else once it settles.
 */
export function outcomeOf(
  f: Finisher,
  inst: Instance,
  call: Call,
  started: { value?: QuickJSHandle; error?: QuickJSHandle },
): Outcome | Promise<Outcome> {
  if (started.error) {
    const e = errorText(inst.context, started.error);
    started.error.dispose();
    return { error: e };
  }
  const now = settled(inst, call, started.value!);
  return now === 'pending' ? settleGuest(f, inst, call, started.value!) : now;
}

/** Calls a guest function of the prelude with one number in a segment; the returned handle is the caller's. */
function callGuest(state: WorkerState, inst: Instance, call: Call, name: string, n: number) {
  const ctx = inst.context;
  using fn = ctx.getProp(ctx.global, name);
  using arg = ctx.newNumber(n);
  return segment(state, inst, call, () => {
    const r = ctx.callFunction(fn, ctx.undefined, arg);
    runJobs(inst);
    return r;
  });
}

/**
 * Sends a streamed answer's body: one guest chunk per pull from the pool (so a slow visitor holds
 * the guest back instead of filling memory), until the stream ends, fails, grows past its cap,
 * the visitor goes away (the app's `cancel` runs) or the call's wall-clock limit ends it.
 */
export async function pump(
  f: Finisher,
  inst: Instance,
  call: Call,
  streamId: number,
): Promise<void> {
  const state = f.state;
  const s = call.stream!;
  for (;;) {
    while (!call.done && !s.cancelled && s.pulls === 0) {
      await f.woken(call); // a pull, a cancel, or the wall-clock limit
    }
    if (call.done) return;
    const cancelling = s.cancelled;
    if (!cancelling) s.pulls--;
    const outcome = await outcomeOf(
      f,
      inst,
      call,
      callGuest(state, inst, call, cancelling ? '__cancel' : '__pull', streamId),
    );
    if (!outcome) return;
    if ('error' in outcome)
      return cancelling
        ? f.succeed(inst, call, { ok: true })
        : f.failCall(inst, call, 'exception', outcome.error.message, outcome.error.stack);
    using value = outcome.value;
    if (cancelling) return f.succeed(inst, call, { ok: true });
    const { done, bytes } = chunkOf(inst, value);
    if (done || !bytes) return f.succeed(inst, call, { ok: true });
    s.bytes += bytes.byteLength;
    if (s.bytes > MAX_STREAMED_BYTES)
      return f.failCall(
        inst,
        call,
        'stream_too_large',
        `the response stream is larger than ${MAX_STREAMED_BYTES / 1024 / 1024} MiB`,
      );
    state.outbox.push({ t: 'chunk', id: call.inv.id, bytes }, [bytes], call.inv.release.releaseId);
  }
}

/**
 * The next chunk of a guest stream the host reads (an outbound request's body): `name` is the
 * prelude's pull function. Guest code that fails here fails its call.
 */
export async function pullGuest(
  f: Finisher,
  inst: Instance,
  call: Call,
  name: string,
  id: number,
): Promise<{ done: boolean; bytes?: ArrayBuffer }> {
  if (call.done) throw new Error('the call is over');
  let started;
  try {
    started = callGuest(f.state, inst, call, name, id);
  } catch (err) {
    f.failGuest(inst, call, err);
    throw err;
  }
  const outcome = await outcomeOf(f, inst, call, started);
  if (!outcome) throw new Error('the call is over');
  if ('error' in outcome) throw new Error(outcome.error.message);
  using value = outcome.value;
  return chunkOf(inst, value);
}

/** A guest pull's `{done}` or `{done: false, value: ArrayBuffer}` (the prelude's `pullFrom`), copied out. */
function chunkOf(inst: Instance, value: QuickJSHandle): { done: boolean; bytes?: ArrayBuffer } {
  const ctx = inst.context;
  using doneH = ctx.getProp(value, 'done');
  if (ctx.dump(doneH) === true) return { done: true };
  using chunkH = ctx.getProp(value, 'value');
  using lt = ctx.getArrayBuffer(chunkH);
  return { done: false, bytes: lt.value.slice().buffer };
}
