/**
 * A release's server modules as the engine's bytecode (the platform's own build only: its C
 * interface has `QTS_WriteModules` and `QTS_EvalModules`, engine/interface-eval.c). Made when a
 * release is published, from its source, in a runtime of its own; evaluated on a cold start instead
 * of compiling the source again. QuickJS's bytecode is unsafe to load from anyone but the platform
 * (design): it is made here and read back only from the platform's own storage.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

type Module = {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _QTS_WriteModules?: (ctx: number, outLength: number) => number;
  _QTS_EvalModules?: (ctx: number, pack: number, length: number, entry: number) => number;
  _QTS_WriteBytecode?: (ctx: number, compiled: number, outLength: number) => number;
  _QTS_EvalBytecode?: (ctx: number, bytes: number, length: number) => number;
};
type Internals = {
  ctx: { value: number };
  ffi: {
    QTS_ResolveException(ctx: number, value: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  memory: { module: Module; heapValueHandle(ptr: number): QuickJSHandle };
};

export const internals = (context: QuickJSContext) => context as unknown as Internals;

type Evaluated =
  | { value: QuickJSHandle; error?: undefined }
  | { error: QuickJSHandle; value?: undefined };

/** The engine's answer at `result` (a value pointer) as evalCode gives it: a value, or the exception. */
export function settled(context: QuickJSContext, result: number): Evaluated {
  const { ctx, ffi, memory } = internals(context);
  const error = ffi.QTS_ResolveException(ctx.value, result);
  if (error) {
    ffi.QTS_FreeValuePointer(ctx.value, result);
    return { error: memory.heapValueHandle(error) };
  }
  return { value: memory.heapValueHandle(result) };
}

/** Whether this engine build reads and writes module bytecode. */
export function hasModuleBytecode(context: QuickJSContext): boolean {
  return typeof internals(context).memory.module._QTS_EvalModules === 'function';
}

/**
 * Compiles the release's modules from `entry` (the module loader set on `context`'s runtime gives
 * the others) without running them, and returns them as one pack; throws the compiler's error.
 */
export function compileModules(context: QuickJSContext, entry: string, source: string): Uint8Array {
  const compiled = context.evalCode(source, entry, { type: 'module', compileOnly: true });
  if (compiled.error) {
    const e = context.dump(compiled.error) as { message?: string } | string;
    compiled.error.dispose();
    throw new Error(typeof e === 'string' ? e : (e?.message ?? 'the module did not compile'));
  }
  compiled.value.dispose();
  const { ctx, memory } = internals(context);
  const m = memory.module;
  const lengthPtr = m._malloc(4);
  try {
    const pack = m._QTS_WriteModules!(ctx.value, lengthPtr);
    if (!pack) throw new Error('the modules could not be written as bytecode');
    const length = m.HEAPU32[lengthPtr >> 2]!;
    const out = m.HEAPU8.slice(pack, pack + length);
    m._free(pack);
    return out;
  } finally {
    m._free(lengthPtr);
  }
}

/** Reads a pack into `context` and evaluates its module `entry`: as `evalCode` of that module's source. */
export function evalModules(context: QuickJSContext, pack: Uint8Array, entry: string): Evaluated {
  const { ctx, memory } = internals(context);
  const m = memory.module;
  const name = new TextEncoder().encode(`${entry}\0`);
  const packPtr = m._malloc(pack.length || 1);
  const namePtr = m._malloc(name.length);
  let result: number;
  try {
    // the heap views are read after each malloc: a malloc may grow the memory and replace them
    m.HEAPU8.set(pack, packPtr);
    m.HEAPU8.set(name, namePtr);
    result = m._QTS_EvalModules!(ctx.value, packPtr, pack.length, namePtr);
  } finally {
    m._free(packPtr);
    m._free(namePtr);
  }
  return settled(context, result);
}
