/**
 * Invocations inside a worker: a call enters its release's instance through `__dispatch`, waits on
 * its guest promise while timers and host answers run further segments, and ends in exactly one
 * answer (result, or failure of a kind). Every answer is redacted of the app's secrets first.
 */
import { BEGUN_COUNT, LAST_BEGUN } from './shared-state.ts';
import type { QuickJSHandle } from 'quickjs-emscripten';
import type { FailureKind, Invocation, InvocationResult, WorkerInbound } from './protocol.ts';
import { createInstances } from './instances.ts';
import {
  errorText,
  failureKind,
  isPoison,
  JobFailure,
  overMemoryCap,
  runJobs,
  segment,
} from './limits.ts';
import { redactLog, scrubString, secretForms } from './redact.ts';
import { LoadError, Poisoned, type Call, type Instance, type WorkerState } from './worker-state.ts';
import { encodeResult, requestInput } from './wire.ts';
import { readAnswer, type AnswerHead } from './answer.ts';
import { callFunctionFast, newGuestString } from './fast-calls.ts';
import { newTextBytesPair } from './host-text.ts';
import { type Finisher, outcomeOf, pullGuest, pump } from './guest-calls.ts';

type HostResult = Extract<WorkerInbound, { t: 'host-result' }>;

export function createCalls(state: WorkerState) {
  const instances = createInstances(state, {
    fireTimer,
    settle: hostResult,
    pullGuest: (inst, call, name, id) => pullGuest(finisher, inst, call, name, id),
  });
  /** Wakes everything of `call` waiting on the guest (its handler, a stream's pump, an upload's pull). */
  const wake = (call: Call) => {
    const w = call.waiters;
    call.waiters = undefined;
    w?.forEach((f) => f());
  };
  /** Resolves at the next wake of `call`: a timer or host answer ran a segment, or the call ended. */
  const woken = (call: Call) => new Promise<void>((resolve) => (call.waiters ??= []).push(resolve));

  /** Calls whose answer is streaming, by invocation id. */
  const streams = new Map<number, Call>();
  const newCall = (inv: Invocation): Call => ({
    inv,
    hostCalls: 0,
    logs: [],
    secretsRead: new Set(),
    cpuUsedMs: 0,
    segmentStart: 0,
    segmentCpuStart: 0,
    done: false,
  });

  function finish(call: Call, result: InvocationResult, transfer: ArrayBuffer[] = []): void {
    if (call.done) return;
    call.done = true;
    state.lastActivity = performance.now();
    // its outbound requests end with it (waiting ones never start)
    if (call.outbound) {
      call.outbound.queue.length = 0;
      for (const c of call.outbound.running.values()) c.abort();
      result.fetches = call.outbound.count;
    }
    if (call.inv.id < 0) return; // the boot warm-up answers no one
    // Redacted of every secret of the app, not only those read in this call (a module may keep one
    // from an earlier call); worked out only when there is text to redact, which most calls have not.
    const failed = !result.ok && result.error;
    if (call.logs.length > 0 || failed) {
      const secretValues = secretForms(Object.values(call.inv.secrets));
      result.logs = call.logs.map((l) => redactLog(l, secretValues));
      if (failed) {
        failed.message = scrubString(failed.message, secretValues);
        if (failed.stack) failed.stack = scrubString(failed.stack, secretValues);
      }
    }
    result.cpuMs = Math.round(call.cpuUsedMs * 100) / 100;
    if (state.poisoned) result.poisoned = true;
    if (call.stream) {
      // its head went out already: what is left is how it ended
      streams.delete(call.inv.id);
      const { ok, error, logs, cpuMs, fetches, poisoned } = result;
      state.outbox.push(
        {
          t: 'end',
          id: call.inv.id,
          end: { ok, error, logs, cpuMs, fetches, poisoned, bytes: call.stream.bytes },
        },
        [],
        call.inv.release.releaseId,
      );
      return;
    }
    state.outbox.push(encodeResult(call.inv.id, result), transfer, call.inv.release.releaseId);
  }

  /**
   * After a call, returned or thrown: whether what its instance keeps is over the memory cap. If so the
   * instance is retired (the WASM module itself is fine: only this instance goes, and its memory is
   * returned) and the call fails with this message, kind `memory`.
   */
  function overCap(inst: Instance, call: Call): string | undefined {
    const over = inst.retired ? undefined : overMemoryCap(state, inst, call);
    if (over !== undefined) instances.retire(inst);
    return over;
  }

  /** A call that finished: answered, unless its instance is now over the memory cap. */
  function succeed(
    inst: Instance,
    call: Call,
    result: InvocationResult,
    transfer: ArrayBuffer[] = [],
  ): void {
    inst.inflight--;
    const over = overCap(inst, call);
    finish(
      call,
      over === undefined ? result : { ok: false, error: { kind: 'memory', message: over } },
      over === undefined ? transfer : [],
    );
  }

  /** A segment threw: guest code that failed beyond its promises (a JobFailure) is the app's failure; anything else is a crash. */
  function failGuest(inst: Instance, call: Call, err: unknown): void {
    if (err instanceof JobFailure)
      return failCall(inst, call, 'exception', err.message, err.guestStack);
    failCall(inst, call, 'crash', (err as Error).message);
  }

  function failCall(
    inst: Instance | undefined,
    call: Call,
    kind: FailureKind,
    message: string,
    stack?: string,
  ): void {
    const finalKind = failureKind(kind, message);
    // QuickJS's own stack check (maxStackSizeBytes) throws an ordinary guest exception and unwinds
    // cleanly: only that instance goes. A stack overflow the host sees (the WASM stack) poisons the module.
    const guestStack = kind === 'exception' && finalKind === 'stack';
    if (
      !guestStack &&
      (finalKind === 'memory' ||
        finalKind === 'stack' ||
        finalKind === 'crash' ||
        isPoison(message))
    )
      state.poisoned = true;
    let over: string | undefined;
    if (inst) {
      inst.inflight--;
      // An interrupted or failed runtime is not reused; disposing one that ran out of memory may
      // itself abort the WASM module, which poisons it.
      if (state.poisoned) instances.forget(inst);
      else if (finalKind === 'timeout' || guestStack)
        instances.retire(inst); // disposed when invoke() lets go of its handles
      // what a call that threw kept counts as a returning call's does (else keep-then-throw would grow unchecked)
      else over = overCap(inst, call);
    }
    if (over !== undefined) finish(call, { ok: false, error: { kind: 'memory', message: over } });
    else
      finish(call, {
        ok: false,
        error: { kind: finalKind, message, stack },
        poisoned: state.poisoned,
      });
    // A call parked on a timer or host call (the wall-clock limit) wakes up to release its handles.
    wake(call);
  }

  /** What the guest's streams and promises need of this call's life (guest-calls.ts). */
  const finisher: Finisher = { state, woken, succeed, failCall, failGuest };

  /** A host call was answered (by the main thread, or an outbound fetch here): settle the guest's promise and run what it unblocks. */
  function hostResult(msg: Omit<HostResult, 't'>): void {
    const pending = state.hostCalls.get(msg.callId);
    if (!pending) return;
    state.hostCalls.delete(msg.callId);
    using deferred = pending.deferred;
    const { inst, call } = pending;
    if (call.done) return;
    const ctx = inst.context;
    try {
      segment(state, inst, call, () => {
        if (msg.ok && msg.bytes) {
          using pair = newTextBytesPair(ctx, msg.value ?? 'null', msg.bytes);
          deferred.resolve(pair);
        } else if (msg.ok) {
          using v = ctx.newString(msg.value ?? 'null');
          deferred.resolve(v);
        } else {
          using e = ctx.newError({
            name: 'PlatformError',
            message: JSON.stringify(msg.error ?? { code: 'internal_error', message: 'failed' }),
          });
          deferred.reject(e);
        }
        runJobs(inst);
      });
    } catch (err) {
      return failGuest(inst, call, err);
    }
    wake(call);
  }

  function fireTimer(inst: Instance, id: number): void {
    const t = inst.timers.get(id);
    if (!t || t.call.done) return;
    inst.timers.delete(id);
    const { context: ctx } = inst;
    try {
      using fire = ctx.getProp(ctx.global, '__fireTimer');
      using arg = ctx.newNumber(id);
      const r = segment(state, inst, t.call, () => {
        const res = ctx.callFunction(fire, ctx.undefined, arg);
        runJobs(inst);
        return res;
      });
      if (r.error) {
        // An exception in a timer callback ends the invocation that scheduled it.
        const e = errorText(ctx, r.error);
        r.error.dispose();
        wake(t.call);
        return failCall(inst, t.call, 'exception', e.message, e.stack);
      }
      r.value.dispose();
    } catch (err) {
      return failGuest(inst, t.call, err);
    }
    wake(t.call);
  }

  /** Publish-time check: the module loaded. Reports which handlers it exports. */
  function reportHandlers(inst: Instance, call: Call): void {
    // asked for, the release's modules as bytecode come back as the body (module-bytecode.ts)
    const body = call.inv.compile ? instances.compile(call.inv) : undefined;
    const headers: [string, string][] = [['x-handlers', instances.handlerNames(inst).join(',')]];
    const response = body ? { status: 200, headers, body } : { status: 200, headers };
    inst.inflight++;
    succeed(inst, call, { ok: true, response }, body ? [body] : []);
    instances.disposeIfRetired(inst);
  }

  /** The head of the guest's answer; one the prelude never writes fails the call as the app's own error, not as a crash that would replace the worker. */
  function answerHead(s: string, withText: boolean): AnswerHead {
    try {
      return readAnswer(s, withText);
    } catch (err) {
      throw new JobFailure(`TypeError: ${(err as Error).message}`);
    }
  }

  /** Turns the guest's settled answer into the call's result; for a streamed answer, sends its head and gives the guest's stream id. */
  function answer(inst: Instance, call: Call): (value: QuickJSHandle) => number | undefined {
    const ctx = inst.context;
    return (value) => {
      if (ctx.typeof(value) === 'string') {
        succeed(inst, call, { ok: true, response: answerHead(ctx.getString(value), true) });
        return undefined;
      }
      using missingH = ctx.getProp(value, 'missing');
      if (ctx.dump(missingH) === true) {
        inst.inflight--;
        finish(call, {
          ok: false,
          error: {
            kind: 'no-handler',
            message: `the server module has no ${call.inv.handler}() handler`,
          },
        });
        return undefined;
      }
      using metaH = ctx.getProp(value, 'meta');
      using bodyH = ctx.getProp(value, 'body');
      using streamH = ctx.getProp(value, 'stream');
      const response = answerHead(ctx.getString(metaH), false);
      if (ctx.typeof(streamH) === 'number') {
        // the head goes now; the body follows chunk by chunk as the visitor pulls (pump)
        call.stream = { pulls: 0, cancelled: false, bytes: 0 };
        streams.set(call.inv.id, call);
        state.outbox.push(
          encodeResult(call.inv.id, {
            ok: true,
            response: { status: response.status, headers: response.headers, streaming: true },
          }),
          [],
          call.inv.release.releaseId,
        );
        return ctx.getNumber(streamH);
      }
      let out: ArrayBuffer | undefined;
      if (ctx.typeof(bodyH) !== 'undefined') {
        using lt = ctx.getArrayBuffer(bodyH);
        out = lt.value.slice().buffer;
      }
      succeed(
        inst,
        call,
        {
          ok: true,
          response: out
            ? { status: response.status, headers: response.headers, body: out }
            : response,
        },
        out ? [out] : [],
      );
      return undefined;
    };
  }

  /** The pool asks for the next chunk of a streamed answer, or says its visitor went away. */
  function streamControl(msg: { t: 'pull' | 'cancel'; id: number }): void {
    const s = streams.get(msg.id)?.stream;
    if (!s) return;
    if (msg.t === 'pull') s.pulls++;
    else s.cancelled = true;
    wake(streams.get(msg.id)!);
  }

  async function invoke(inv: Invocation): Promise<void> {
    if (state.poisoned) return; // the pool retries what this worker never began
    state.shared[LAST_BEGUN] = inv.id;
    if (inv.id > 0) state.shared[BEGUN_COUNT]!++; // not the warm-up's
    const call = newCall(inv);
    let inst: Instance | 'missing-sources';
    try {
      inst = instances.for(inv);
    } catch (err) {
      if (err instanceof LoadError)
        return finish(call, {
          ok: false,
          error: { kind: 'load', message: err.message, stack: err.guestStack },
        });
      return failCall(
        undefined,
        call,
        err instanceof Poisoned ? 'memory' : 'crash',
        (err as Error).message,
      );
    }
    if (inst === 'missing-sources')
      return finish(call, {
        ok: false,
        error: { kind: 'missing-sources', message: 'release not loaded in this worker' },
      });
    if (inv.handler === 'load') return reportHandlers(inst, call);
    const { context: ctx } = inst;
    inst.inflight++;
    const wall = setTimeout(
      () => failCall(inst, call, 'timeout', 'wall-clock limit reached'),
      inv.limits.wallMs,
    );
    try {
      let started;
      {
        const kind =
          inv.handler === 'fetch'
            ? (inst.fetchKind ??= ctx.newString('fetch'))
            : ctx.newString(inv.handler);
        using meta = newGuestString(ctx, inv.input);
        using body = inv.body ? ctx.newArrayBuffer(inv.body) : ctx.undefined;
        try {
          started = segment(state, inst, call, () => {
            const r = callFunctionFast(ctx, inst.dispatch, ctx.undefined, [
              inst.handlers,
              kind,
              meta,
              body,
            ]);
            runJobs(inst);
            return r;
          });
        } finally {
          if (kind !== inst.fetchKind) kind.dispose();
        }
      }
      const next = outcomeOf(finisher, inst, call, started);
      const outcome = next instanceof Promise ? await next : next;
      if (!outcome) return;
      if ('error' in outcome)
        return failCall(inst, call, 'exception', outcome.error.message, outcome.error.stack);
      let streamId: number | undefined;
      {
        using value = outcome.value;
        streamId = answer(inst, call)(value);
      }
      if (streamId !== undefined) await pump(finisher, inst, call, streamId);
    } catch (err) {
      failGuest(inst, call, err);
    } finally {
      clearTimeout(wall);
      for (const [id, t] of inst.timers) {
        if (t.call === call) {
          clearTimeout(t.timer);
          inst.timers.delete(id);
        }
      }
      instances.disposeIfRetired(inst);
      // A poisoned worker takes no more work; the pool terminates and replaces it.
    }
  }

  /**
   * One trivial request through the whole path (blank instance, module load, dispatch, answer)
   * before the worker reports ready, so the first real request finds the WASM and V8 code warm.
   */
  async function warmUp(): Promise<void> {
    const releaseId = '\u0000warm-up';
    const source =
      "export default { fetch(request) { return new Response(request.url + request.headers.get('host'), { headers: { 'content-type': 'text/plain' } }); } };";
    await invoke({
      id: -1,
      handler: 'fetch',
      app: { app_id: 'warm-up', origin: 'http://warm-up.invalid', release_id: releaseId },
      release: { releaseId, entry: 'server.js', sources: { 'server.js': source } },
      input: requestInput({
        method: 'GET',
        url: 'http://warm-up.invalid/',
        headers: [['host', 'warm-up.invalid']],
      }),
      secrets: {},
      limits: { cpuMs: 1000, wallMs: 5000, ...state.spareLimits },
    });
    const inst = instances.get(releaseId);
    if (inst) instances.dispose(inst);
    state.shared[LAST_BEGUN] = 0;
    instances.makeSpare();
  }

  /** Drops a release's idle instance (the pool evicts releases that are no longer live). */
  function evict(releaseId: string): void {
    const inst = instances.get(releaseId);
    if (inst && inst.inflight === 0) instances.dispose(inst);
  }

  return { invoke, hostResult, evict, warmUp, streamControl };
}
