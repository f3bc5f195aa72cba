/**
 * The two QuickJS operations every server call makes, without quickjs-emscripten's per-call
 * wrapping: making the request's input string and calling the prelude's dispatch. The library's
 * `newString` measures and encodes the string in JS loops and mallocs and frees a buffer for it, and
 * `callFunction` mallocs and frees an argument array; together ~3 µs of a ~20 µs call (in-process,
 * `--cpu-prof`). Here the string is encoded natively (`TextEncoder.encodeInto`) into a buffer kept
 * per WASM module, and the arguments go through another. Both reach into the library's internals
 * (a context's `ffi`, `memory` and its module's heap; the version is pinned by package-lock.json):
 * every server call goes through them, so a library change that moves them fails every sandbox test.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

type Module = { _malloc(bytes: number): number; _free(ptr: number): void; HEAPU8: Uint8Array };
type Internals = {
  ctx: { value: number };
  ffi: {
    QTS_NewString(ctx: number, str: number): number;
    QTS_Call(ctx: number, fn: number, thisVal: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, maybeException: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  memory: { module: Module; heapValueHandle(ptr: number): QuickJSHandle };
};

/** Strings longer than this (in UTF-8 bytes at most) take the library's path, so no module keeps a large buffer. */
const MAX_KEPT_BYTES = 256 * 1024;
const MAX_ARGS = 8;

type Buffers = { strPtr: number; strBytes: number; argv: number };
const buffers = new WeakMap<Module, Buffers>();
const encoder = new TextEncoder();

function buffersOf(module: Module, bytes: number): Buffers {
  let b = buffers.get(module);
  if (!b) buffers.set(module, (b = { strPtr: 0, strBytes: 0, argv: module._malloc(MAX_ARGS * 4) }));
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
