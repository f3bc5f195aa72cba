/**
 * The host side of `__host` (see host-api.ts): the text, URL, encoding and hash functions
 * (host-text.ts), the call's secrets and logs, timers, outbound fetches, crypto.subtle, and
 * asynchronous platform calls that cross to the main thread. The table is typed by `HostApi`, so a name added on one side and
 * not the other does not compile.
 */
import { evalPlatformScript } from './script-bytecode.ts';
import { createHash } from 'node:crypto';
import type { QuickJSContext } from 'quickjs-emscripten';
import type { HostApi } from './host-api.ts';
import type { LogEntry } from './redact.ts';
import { overCpuBudget, platformWork } from './limits.ts';
import { installDirectDispatch } from './host-dispatch.ts';
import { guestValues, type HostFunction, newTextBytesPair, textFunctions } from './host-text.ts';
import { FetchRefused, OUTBOUND, readChunk, readRest, type OutboundRequest } from './outbound.ts';
import { answerIntl } from './intl.ts';
import { forgetKey, runSubtleNow, SubtleError } from './subtle.ts';
import type { Call, Instance, WorkerState } from './worker-state.ts';
import { FETCHES_FAILED, FETCHES_OK } from './shared-state.ts';

export type HostTable = { [K in keyof HostApi]: HostFunction };

export const MAX_HOST_CALLS = 1000;

/**
 * What one invocation's platform calls may send. Their arguments cross as JSON that the main thread
 * parses, unbilled and with every app and the API waiting: a structured document costs it tens of
 * milliseconds per MiB, and app code can hand `host.call` any string it likes (it
 * can replace `JSON.stringify`). A data row is at most 1 MiB and a job payload 64 KiB, so one call's
 * arguments may be 1 MiB and 64 KiB, and all of an invocation's 8 MiB. A file upload's bytes do not
 * travel as JSON: they are copied out of the guest and hashed here (on the app's CPU) and handed
 * over whole, and count against their own 64 MiB per invocation.
 */
export const HOST_CALL_ARGS = {
  maxChars: 1024 * 1024 + 64 * 1024,
  perInvocationChars: 8 * 1024 * 1024,
  uploadPerInvocationBytes: 64 * 1024 * 1024,
} as const;

/** Why the arguments of a platform call are refused (too large), charging them to the call when not. */
/** The platform calls whose bytes cross beside the JSON: a file upload, a response kept by the Cache API. */
const BYTE_CALLS = new Set([
  'files.upload',
  'cache.put',
  'kv.put',
  'r2.put',
  'r2.uploadPart',
  'r2.putChunk',
  'blobs.set',
]);

function argsRefusal(
  call: Call,
  method: string,
  args: string,
  uploadBytes: number,
): string | undefined {
  const sent = (call.argsSent ??= { structured: 0, upload: 0 });
  if (args.length > HOST_CALL_ARGS.maxChars)
    return `the arguments of ${method} are ${args.length} characters of JSON; at most ${HOST_CALL_ARGS.maxChars}`;
  if (sent.structured + args.length > HOST_CALL_ARGS.perInvocationChars)
    return `platform calls may send at most ${HOST_CALL_ARGS.perInvocationChars / 1024 / 1024} MiB of JSON per request (file bytes apart)`;
  if (sent.upload + uploadBytes > HOST_CALL_ARGS.uploadPerInvocationBytes)
    return `file uploads may send at most ${HOST_CALL_ARGS.uploadPerInvocationBytes / 1024 / 1024} MiB per request`;
  sent.structured += args.length;
  sent.upload += uploadBytes;
  return undefined;
}

/**
 * An upload's bytes in an ArrayBuffer of their own, to be transferred to the main thread (a Buffer
 * may share a pooled one, which cannot be), and their SHA-256, both on the app's CPU.
 */
function ownedCopy(bytes: Uint8Array): { bytes: ArrayBuffer; sha256: string } {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return { bytes: copy, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** What app code's TypeError says when a fetch or a body read fails. */
/** What app code's `fetch` rejects with when the request or its body fails (the catalogue's `fetch_failed`). */
function fetchFailure(
  err: unknown,
  controller: AbortController | undefined,
): { code: 'fetch_failed'; message: string } {
  const message =
    err instanceof FetchRefused
      ? err.message
      : controller?.signal.aborted
        ? 'fetch aborted'
        : `fetch failed: ${(err as Error).message}`;
  return { code: 'fetch_failed', message };
}
const MAX_LOGS = 200;

/** What host functions call back into: the timers and settling of `calls.ts`. */
export type HostHooks = {
  fireTimer(inst: Instance, id: number): void;
  /** Settles a guest promise begun by a host function (as the main thread's host-result does). */
  settle(result: {
    callId: number;
    ok: boolean;
    value?: string;
    bytes?: ArrayBuffer;
    error?: { code: string; message: string };
  }): void;
  /** Reads the next chunk of a guest stream through one of the prelude's pull functions. */
  pullGuest(
    inst: Instance,
    call: Call,
    name: string,
    id: number,
  ): Promise<{ done: boolean; bytes?: ArrayBuffer }>;
};

function hostTable(state: WorkerState, inst: Instance, hooks: HostHooks): HostTable {
  const ctx: QuickJSContext = inst.context;
  const { text, str, bytes, json } = guestValues(ctx);
  /** A guest promise settled later by `hooks.settle` (also when the main thread or a worker-side operation answers). */
  const pending = (call: Call) => {
    const deferred = ctx.newPromise();
    const callId = state.nextHostCallId++;
    state.hostCalls.set(callId, { deferred, inst, call });
    return { handle: deferred.handle, callId };
  };
  return {
    ...textFunctions(ctx),
    now: () => ctx.newNumber(performance.now()),
    secret: (name) => {
      const call = inst.current;
      const n = text(name);
      const value = call?.inv.secrets[n];
      if (value === undefined) return ctx.undefined;
      call!.secretsRead.add(n);
      return json(value);
    },
    log: (level, message, metadata) => {
      const call = inst.current;
      if (!call || call.logs.length >= MAX_LOGS) return ctx.undefined;
      let meta: unknown;
      const raw = str(metadata);
      if (raw !== undefined) {
        try {
          meta = JSON.parse(raw);
        } catch {
          meta = raw;
        }
      }
      call.logs.push({
        level: ctx.getString(level) as LogEntry['level'],
        message: text(message),
        metadata: meta,
      });
      return ctx.undefined;
    },
    console: (level, parts) => {
      const call = inst.current;
      if (!call || call.logs.length >= MAX_LOGS) return ctx.undefined;
      let list: unknown[];
      try {
        list = JSON.parse(ctx.getString(parts)) as unknown[];
      } catch {
        list = ['[unprintable console arguments]'];
      }
      call.logs.push({
        level: ctx.getString(level) as LogEntry['level'],
        message: '',
        parts: Array.isArray(list) ? list : [String(list)],
      });
      return ctx.undefined;
    },
    setTimer: (id, ms) => {
      const call = inst.current;
      if (!call) return ctx.undefined;
      const timerId = ctx.getNumber(id);
      const delay = Math.min(ctx.getNumber(ms), call.inv.limits.wallMs);
      const timer = setTimeout(() => hooks.fireTimer(inst, timerId), delay);
      inst.timers.set(timerId, { timer, call });
      return ctx.undefined;
    },
    clearTimer: (id) => {
      const timerId = ctx.getNumber(id);
      const t = inst.timers.get(timerId);
      if (t) clearTimeout(t.timer);
      inst.timers.delete(timerId);
      return ctx.undefined;
    },
    fetch: (id, requestJson, body) => {
      const call = inst.current;
      if (!call || call.done) throw new Error('fetch is only possible during a call');
      const o = (call.outbound ??= {
        count: 0,
        inFlight: 0,
        queue: [] as (() => void)[],
        running: new Map<number, AbortController>(),
        bodies: new Map(),
      });
      if (o.count >= OUTBOUND.maxRequests)
        throw new Error(`fetch refused: at most ${OUTBOUND.maxRequests} requests per invocation`);
      o.count++;
      const guestId = ctx.getNumber(id);
      const request = JSON.parse(ctx.getString(requestJson)) as OutboundRequest & {
        streamBody?: boolean;
      };
      if (body !== undefined && ctx.typeof(body) !== 'undefined')
        request.body = new Uint8Array(bytes(body)).buffer;
      if (request.streamBody) {
        // the app's stream goes out as undici asks for it, one guest chunk per pull
        request.body = new ReadableStream<Uint8Array>({
          pull: async (c) => {
            const r = await hooks.pullGuest(inst, call, '__upPull', guestId);
            if (r.done) c.close();
            else c.enqueue(new Uint8Array(r.bytes!));
          },
        });
      }
      const { handle, callId } = pending(call);
      const controller = new AbortController();
      o.running.set(guestId, controller);
      const start = () => {
        o.inFlight++;
        const settled = controller.signal.aborted
          ? Promise.reject(new FetchRefused('fetch aborted'))
          : state.outbound.send(request, controller.signal).then((res) => {
              state.shared[FETCHES_OK]!++;
              const { body: reader, ...head } = res;
              // the head answers the fetch; the body stays with the host until the app reads it (fetchRead)
              if (reader) o.bodies.set(guestId, { reader, host: new URL(head.url).host });
              else o.running.delete(guestId);
              hooks.settle({
                callId,
                ok: true,
                value: JSON.stringify({ ...head, body: !!reader }),
              });
            });
        settled
          .catch((err: unknown) => {
            state.shared[FETCHES_FAILED]!++;
            o.running.delete(guestId);
            hooks.settle({
              callId,
              ok: false,
              error: fetchFailure(err, controller),
            });
          })
          .finally(() => {
            o.inFlight--;
            o.queue.shift()?.();
          });
      };
      if (o.inFlight < OUTBOUND.maxInFlight) start();
      else o.queue.push(start);
      return handle;
    },
    subtle: (method, argsJson) => {
      const call = inst.current;
      if (!call || call.done) throw new Error('crypto.subtle is only usable during a call');
      const name = ctx.getString(method);
      const args = ctx.getString(argsJson);
      const now = runSubtleNow(inst, name, args);
      if (now) return newTextBytesPair(ctx, now.value, now.bytes);
      const { handle, callId } = pending(call);
      state.subtle.run(inst, call, name, args).then(
        (r) => hooks.settle({ callId, ok: true, value: r.value, bytes: r.bytes }),
        (err: unknown) =>
          hooks.settle({
            callId,
            ok: false,
            error: {
              code: err instanceof SubtleError ? err.domName : 'OperationError',
              message: (err as Error).message,
            },
          }),
      );
      return handle;
    },
    subtleRelease: (id) => {
      forgetKey(inst, ctx.getNumber(id));
      return ctx.undefined;
    },
    intl: (request) => ctx.newString(answerIntl(ctx.getString(request))),
    fetchRead: (id, whole) => {
      const call = inst.current;
      if (!call || call.done) throw new Error('a response body is only readable during its call');
      const guestId = ctx.getNumber(id);
      const o = call.outbound;
      const body = o?.bodies.get(guestId);
      if (!o || !body) throw new Error('this response body is no longer readable');
      const controller = o.running.get(guestId);
      const { handle, callId } = pending(call);
      const over = () => {
        o.bodies.delete(guestId);
        o.running.delete(guestId);
      };
      const read =
        ctx.dump(whole) === true
          ? readRest(body.reader, body.host).then((bytes) => ({ done: true, bytes }))
          : readChunk(body.reader);
      read.then(
        (r) => {
          if (r.done) over();
          hooks.settle({
            callId,
            ok: true,
            value: JSON.stringify({ done: r.done }),
            bytes: r.bytes,
          });
        },
        (err: unknown) => {
          over();
          hooks.settle({
            callId,
            ok: false,
            error: fetchFailure(err, controller),
          });
        },
      );
      return handle;
    },
    fetchAbort: (id) => {
      inst.current?.outbound?.running.get(ctx.getNumber(id))?.abort();
      return ctx.undefined;
    },
    loadChunk: (name) => {
      const n = ctx.getString(name);
      const source = state.chunks[n];
      if (source === undefined) throw new Error(`no platform chunk named ${n}`);
      return platformWork(inst, () => {
        const r = evalPlatformScript(ctx, source, `platform:${n}.js`);
        if (!r.error) return r.value;
        const e = ctx.dump(r.error) as { message?: string } | undefined;
        r.error.dispose();
        throw new Error(`platform chunk ${n} failed to load: ${e?.message ?? String(e)}`);
      });
    },
    call: (method, args, bytesHandle) => {
      const call = inst.current;
      if (!call || call.done) throw new Error('host calls are only possible during a call');
      if (call.hostCalls >= MAX_HOST_CALLS)
        throw new Error(`at most ${MAX_HOST_CALLS} platform calls per invocation`);
      call.hostCalls++;
      const m = ctx.getString(method);
      const a = ctx.getString(args);
      // An upload's bytes are refused by their size before they are copied out of the guest, and
      // copied before anything else allocates there (growing its memory would detach the view).
      let hashed: { bytes: ArrayBuffer; sha256: string } | undefined;
      let tooLarge: string | undefined;
      {
        using view =
          BYTE_CALLS.has(m) && bytesHandle !== undefined && ctx.typeof(bytesHandle) === 'object'
            ? ctx.getArrayBuffer(bytesHandle)
            : undefined;
        tooLarge = argsRefusal(call, m, a, view?.value.byteLength ?? 0);
        if (view && !tooLarge) hashed = ownedCopy(view.value);
      }
      const deferred = ctx.newPromise();
      if (tooLarge) {
        // refused here, before the main thread parses anything: app code gets a PlatformError with this code
        using e = ctx.newError({
          name: 'PlatformError',
          message: JSON.stringify({ code: 'payload_too_large', message: tooLarge }),
        });
        deferred.reject(e);
        const rejected = deferred.handle.dup();
        deferred.dispose();
        return rejected;
      }
      const callId = state.nextHostCallId++;
      state.hostCalls.set(callId, { deferred, inst, call });
      state.outbox.push(
        {
          t: 'host-call',
          invocationId: call.inv.id,
          callId,
          method: m,
          args: a,
          ...(hashed && { upload: hashed }),
        },
        hashed ? [hashed.bytes] : [],
        call.inv.release.releaseId,
      );
      return deferred.handle;
    },
  };
}

/**
 * Platform functions that only let go of something (a timer, a key, a fetch): they cost nothing and
 * run even once the call is over its CPU budget, so what the call held is not kept past it.
 */
const LETTING_GO = new Set(['clearTimer', 'subtleRelease', 'fetchAbort']);

/** Installs `__host` in the instance's global scope; the prelude takes it and removes it. */
export function installHost(state: WorkerState, inst: Instance, hooks: HostHooks): void {
  const ctx = inst.context;
  installDirectDispatch(ctx); // the library's own path stays where its internals differ
  using host = ctx.newObject();
  // as QuickJS's interrupt reads; guest code can catch this one, but every platform function it
  // calls after fails at once, and its own code is interrupted at QuickJS's next check
  const interrupted = () => ({
    error: ctx.newError({ name: 'InternalError', message: 'interrupted' }),
  });
  for (const [name, impl] of Object.entries(hostTable(state, inst, hooks))) {
    const checked = !LETTING_GO.has(name);
    using f = ctx.newFunction(name, (...args) => {
      if (checked && inst.current?.cpuExceeded && !inst.platformWork) return interrupted();
      let out: ReturnType<HostFunction>;
      try {
        out = impl(...args);
      } catch (err) {
        return { error: ctx.newError({ name: 'TypeError', message: (err as Error).message }) };
      }
      // the call's budget is checked here as QuickJS's interrupt would: once over it, every host
      // function fails and the guest's own code is interrupted; the segment then ends the call
      if (checked && overCpuBudget(inst)) {
        if (out?.alive) out.dispose();
        return interrupted();
      }
      return out;
    });
    ctx.setProp(host, name, f);
  }
  ctx.setProp(ctx.global, '__host', host);
}
