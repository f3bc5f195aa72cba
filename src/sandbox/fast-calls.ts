/**
 * The two QuickJS operations every server call makes, without quickjs-emscripten's per-call
 * wrapping: making the request's input string and calling the prelude's dispatch. The library's
 * `newString` measures and encodes the string in JS loops and mallocs and frees a buffer for it, and
 * `callFunction` mallocs and frees an argument array; together a sizeable share of a trivial call
 * (in-process, `--cpu-prof`). Here the string is encoded natively (`TextEncoder.encodeInto`) into a buffer kept
 * per WASM module, and the arguments go through another. Both reach into the library's internals
 * (a context's `ffi`, `memory` and its module's heap; the version is pinned by package-lock.json):
 * every server call goes through them, so a library change that moves them fails every sandbox test.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';

type Module = { _malloc(bytes: number): number; _free(ptr: number): void; HEAPU8: Uint8Array };
type Internals = {
  ctx: { value: number };
  ffi: {
    QTS_NewString(ctx: number, str: number): number;
    QTS_GetString(ctx: number, value: number): number;
    QTS_FreeCString(ctx: number, str: number): void;
    QTS_NewArrayBuffer(ctx: number, buffer: number, length: number): number;
    QTS_GetArrayBuffer(ctx: number, value: number): number;
    QTS_GetArrayBufferLength(ctx: number, value: number): number;
    QTS_Call(ctx: number, fn: number, thisVal: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, maybeException: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
    QTS_ExecutePendingJob(rt: number, maxJobs: number, lastJobContext: number): number;
    QTS_FreeValuePointerRuntime(rt: number, value: number): void;
  };
  memory: { module: Module; heapValueHandle(ptr: number): QuickJSHandle };
};

/** Strings longer than this (in UTF-8 bytes at most) take the library's path, so no module keeps a large buffer. */
const MAX_KEPT_BYTES = 256 * 1024;
const MAX_ARGS = 8;

/** `jobCtx`: the cell QTS_ExecutePendingJob writes the last job's context into. */
type Buffers = { strPtr: number; strBytes: number; argv: number; jobCtx: number };
const buffers = new WeakMap<Module, Buffers>();
const encoder = new TextEncoder();

function buffersOf(module: Module, bytes: number): Buffers {
  let b = buffers.get(module);
  if (!b)
    buffers.set(
      module,
      (b = {
        strPtr: 0,
        strBytes: 0,
        argv: module._malloc(MAX_ARGS * 4),
        jobCtx: module._malloc(4),
      }),
    );
  if (b.strBytes < bytes) {
    if (b.strPtr) module._free(b.strPtr);
    b.strBytes = Math.max(bytes, 4096);
    b.strPtr = module._malloc(b.strBytes);
  }
  return b;
}

/** `ctx.newString(s)` for a string without NUL (a C string ends there, as with the library's). */
export function newGuestString(ctx: QuickJSContext, s: string): QuickJSHandle {
  const most = s.length * 3 + 1;
  if (most > MAX_KEPT_BYTES) return ctx.newString(s);
  const { ctx: ctxPtr, ffi, memory } = ctx as unknown as Internals;
  const module = memory.module;
  const b = buffersOf(module, most);
  const heap = module.HEAPU8;
  const { written } = encoder.encodeInto(s, heap.subarray(b.strPtr, b.strPtr + most));
  heap[b.strPtr + written] = 0;
  return memory.heapValueHandle(ffi.QTS_NewString(ctxPtr.value, b.strPtr));
}

/** `ctx.callFunction(fn, thisVal, ...args)`, as a `{ value }` or `{ error }` the caller disposes. */
export function callFunctionFast(
  ctx: QuickJSContext,
  fn: QuickJSHandle,
  thisVal: QuickJSHandle,
  args: QuickJSHandle[],
): { value?: QuickJSHandle; error?: QuickJSHandle } {
  if (args.length > MAX_ARGS) return ctx.callFunction(fn, thisVal, args);
  const { ctx: ctxPtr, ffi, memory } = ctx as unknown as Internals;
  const module = memory.module;
  const b = buffersOf(module, 0);
  // QTS_Call copies the values out of this array before any guest code runs, so a nested call may reuse it
  const argv = new Int32Array(module.HEAPU8.buffer, b.argv, args.length);
  for (let i = 0; i < args.length; i++) argv[i] = (args[i] as unknown as { value: number }).value;
  const result = ffi.QTS_Call(
    ctxPtr.value,
    (fn as unknown as { value: number }).value,
    (thisVal as unknown as { value: number }).value,
    args.length,
    b.argv,
  );
  const error = ffi.QTS_ResolveException(ctxPtr.value, result);
  if (error) {
    ffi.QTS_FreeValuePointer(ctxPtr.value, result);
    return { error: memory.heapValueHandle(error) };
  }
  return { value: memory.heapValueHandle(result) };
}

const REPLACEMENT = [0xef, 0xbf, 0xbd];
const ptrOf = (h: QuickJSHandle) => (h as unknown as { value: number }).value;

/**
 * The UTF-8 bytes of a guest string without NUL, as a guest ArrayBuffer: QuickJS writes the string
 * as UTF-8 itself, and the bytes are copied inside WASM memory, never through a JavaScript string
 * (the library's path: a C string decoded into a JavaScript string, encoded again). A lone surrogate,
 * which QuickJS writes as its three-byte form, becomes U+FFFD (three bytes too), as TextEncoder has it.
 */
export function utf8OfGuestString(ctx: QuickJSContext, s: QuickJSHandle): QuickJSHandle {
  const { ctx: ctxPtr, ffi, memory } = ctx as unknown as Internals;
  const module = memory.module;
  const str = ffi.QTS_GetString(ctxPtr.value, ptrOf(s));
  try {
    const end = module.HEAPU8.indexOf(0, str);
    const length = end - str;
    const out = module._malloc(Math.max(1, length));
    const heap = module.HEAPU8; // after malloc, which may grow the memory
    heap.copyWithin(out, str, end);
    const view = heap.subarray(out, out + length);
    for (let i = view.indexOf(0xed); i >= 0; i = view.indexOf(0xed, i + 1))
      if (view[i + 1]! >= 0xa0) view.set(REPLACEMENT, i);
    // the new ArrayBuffer owns `out` and frees it
    return memory.heapValueHandle(ffi.QTS_NewArrayBuffer(ctxPtr.value, out, length));
  } finally {
    ffi.QTS_FreeCString(ctxPtr.value, str);
  }
}

/** A guest ArrayBuffer's bytes decoded by `decoder`, read in place from WASM memory. */
export function decodeGuestBytes(
  ctx: QuickJSContext,
  ab: QuickJSHandle,
  decoder: TextDecoder,
): string {
  const { ctx: ctxPtr, ffi, memory } = ctx as unknown as Internals;
  const module = memory.module;
  const length = ffi.QTS_GetArrayBufferLength(ctxPtr.value, ptrOf(ab));
  const ptr = ffi.QTS_GetArrayBuffer(ctxPtr.value, ptrOf(ab));
  if (!ptr) throw new Error('out of memory reading an ArrayBuffer');
  try {
    return decoder.decode(module.HEAPU8.subarray(ptr, ptr + length));
  } finally {
    module._free(ptr);
  }
}

/**
 * `runtime.executePendingJobs()`, reading the last job's context after the call. The library reads
 * it through a view of the WASM memory made before the call: a job that grows the memory (a large
 * allocation after an `await`) detaches that view, the library reads `undefined`, makes a second
 * context to hold the answer and never frees it, and disposing the runtime then fails its leak check,
 * which ends the sandbox thread (docs/decisions/engine.md). The platform's runtimes have one context
 * each, so every job ran in `ctx`. Returns the exception a job failed with, or undefined.
 */
export function executePendingJobs(
  ctx: QuickJSContext,
  runtime: QuickJSRuntime,
): QuickJSHandle | undefined {
  const { ctx: ctxPtr, ffi, memory } = ctx as unknown as Internals;
  const rt = (runtime as unknown as { rt: { value: number } }).rt.value;
  const module = memory.module;
  const b = buffersOf(module, 0);
  const valuePtr = ffi.QTS_ExecutePendingJob(rt, -1, b.jobCtx);
  const jobCtx = new Int32Array(module.HEAPU8.buffer, b.jobCtx, 1)[0];
  if (jobCtx === 0) {
    ffi.QTS_FreeValuePointerRuntime(rt, valuePtr);
    return undefined;
  }
  if (jobCtx !== ctxPtr.value)
    throw new Error('a promise job ran in a context the platform did not make');
  const result = memory.heapValueHandle(valuePtr);
  if (ctx.typeof(result) === 'number') {
    result.dispose();
    return undefined;
  }
  return result;
}
