/**
 * The direct path from guest code into a host function. quickjs-emscripten routes every such call
 * through its generic `Scope` machinery (a generator per call, a scope object, a lifetime per
 * argument and for `this`), which costs more than Node's own URL parser does, and is paid by every
 * `new URL()`, `TextEncoder` and `crypto` use of an app. This replaces, for one context, the
 * library's per-context dispatcher with one that does the same in a plain loop, an order of
 * magnitude cheaper (`npm run bench:sandbox`; the figures are in the commit that made it).
 *
 * It reaches into the library's context internals, so it checks each of them first and leaves
 * the library's path in place if any is missing (a future version that renamed them): the
 * platform then works the same, only slower; test/runtime/host-dispatch.test.ts fails in that case
 * so an upgrade that loses the fast path is noticed.
 */
import {
  Lifetime,
  WeakLifetime,
  type QuickJSContext,
  type QuickJSHandle,
} from 'quickjs-emscripten';

type Pointer = number;
/** What a host function may return: a handle or `{ value }` (the result), `{ error }` (thrown in the guest), or nothing. */
type HostResult = QuickJSHandle | { value: QuickJSHandle } | { error: QuickJSHandle } | undefined;
type HostFn = (this: QuickJSHandle, ...args: QuickJSHandle[]) => HostResult;

/** The parts of a QuickJSContext this relies on (quickjs-emscripten 0.32's `context.ts`). */
type ContextInternals = {
  ctx?: { value: Pointer };
  ffi?: {
    QTS_ArgvGetJSValueConstPointer?(argv: Pointer, index: number): Pointer;
    QTS_DupValuePointer?(ctx: Pointer, value: Pointer): Pointer;
    QTS_Throw?(ctx: Pointer, error: Pointer): Pointer;
  };
  memory?: { copyJSValue?: (v: Pointer) => Pointer; freeJSValue?: (v: Pointer) => void };
  getFunction?(id: number): HostFn;
  cToHostCallbacks?: {
    callFunction?: (
      ctx: Pointer,
      thisPtr: Pointer,
      argc: number,
      argv: Pointer,
      fnId: number,
    ) => Pointer;
  };
};

/** Installs the direct dispatcher on `context`; false (and nothing changed) where the library's internals are not as expected. */
export function installDirectDispatch(context: QuickJSContext): boolean {
  const it = context as unknown as ContextInternals;
  const ffi = it.ffi;
  const callbacks = it.cToHostCallbacks;
  const memory = it.memory;
  if (
    typeof it.ctx?.value !== 'number' ||
    typeof ffi?.QTS_ArgvGetJSValueConstPointer !== 'function' ||
    typeof ffi.QTS_DupValuePointer !== 'function' ||
    typeof ffi.QTS_Throw !== 'function' ||
    typeof memory?.copyJSValue !== 'function' ||
    typeof memory.freeJSValue !== 'function' ||
    typeof it.getFunction !== 'function' ||
    typeof callbacks?.callFunction !== 'function'
  ) {
    return false;
  }
  const ctxPtr = it.ctx.value;
  const argv = ffi.QTS_ArgvGetJSValueConstPointer.bind(ffi);
  const dup = ffi.QTS_DupValuePointer.bind(ffi);
  const throwIn = ffi.QTS_Throw.bind(ffi);
  const copy = memory.copyJSValue;
  const free = memory.freeJSValue;
  const owner = context.runtime;
  const getFunction = it.getFunction.bind(context);
  /** Throws `handle` in the guest and lets go of it, as the library does with a returned or thrown error. */
  const raise = (handle: QuickJSHandle): Pointer => {
    try {
      return throwIn(ctxPtr, handle.value as unknown as Pointer);
    } finally {
      if (handle.alive) handle.dispose();
    }
  };
  callbacks.callFunction = (ctx, thisPtr, argc, argvPtr, fnId) => {
    if (ctx !== ctxPtr)
      throw new Error('QuickJSContext instance received C -> JS call with mismatched ctx');
    const fn = getFunction(fnId);
    // borrowed from the caller: a WeakLifetime never frees its value (the library passes the same)
    const self = new WeakLifetime(thisPtr, copy, free, owner) as unknown as QuickJSHandle;
    const args = new Array<QuickJSHandle>(argc);
    for (let i = 0; i < argc; i++)
      args[i] = new WeakLifetime(argv(argvPtr, i), copy, free, owner) as unknown as QuickJSHandle;
    try {
      const result = fn.apply(self, args);
      if (!result) return 0;
      if ('error' in result && result.error) return raise(result.error);
      // a handle, or `{ value: handle }` (a call result), as the library takes either
      const handle =
        result instanceof Lifetime
          ? (result as QuickJSHandle)
          : (result as unknown as { value: QuickJSHandle }).value;
      try {
        return dup(ctxPtr, handle.value as unknown as Pointer);
      } finally {
        if (handle.alive) handle.dispose();
      }
    } catch (error) {
      return raise(
        error instanceof Lifetime ? (error as QuickJSHandle) : context.newError(error as Error),
      );
    } finally {
      // borrowed values are only valid during the call: a handle kept past it fails loudly instead of reading freed memory
      self.dispose();
      for (const a of args) a.dispose();
    }
  };
  return true;
}
