/**
 * The platform's own guest code (the prelude, each chunk) compiled once per sandbox thread and
 * kept as bytecode: each new instance reads it instead of compiling the source again (compiling the
 * prelude's 28 KB was 4.8 ms of a cold start's ~6, docs/performance.md). The bytecode is made in
 * this thread from the platform's own source and never leaves it. The own engine only; the stock
 * one evaluates the source, as before.
 */
import type { QuickJSContext } from 'quickjs-emscripten';
import { internals, settled } from './module-bytecode.ts';

type Module = ReturnType<typeof internals>['memory']['module'];
const caches = new WeakMap<Module, Map<string, Uint8Array | null>>();

/** Evaluates a platform script as `context.evalCode(source, filename)` does. */
export function evalPlatformScript(context: QuickJSContext, source: string, filename: string) {
  const { ctx, memory } = internals(context);
  const m = memory.module;
  if (typeof m._QTS_EvalBytecode !== 'function') return context.evalCode(source, filename);
  let cache = caches.get(m);
  if (!cache) caches.set(m, (cache = new Map()));
  let bytes = cache.get(filename);
  if (bytes === undefined) {
    bytes = compile(context, source, filename);
    cache.set(filename, bytes);
  }
  // a script that could not be written is evaluated from its source each time
  if (!bytes) return context.evalCode(source, filename);
  const at = m._malloc(bytes.length || 1);
  let result: number;
  try {
    m.HEAPU8.set(bytes, at); // read after the malloc, which may have grown the memory
    result = m._QTS_EvalBytecode(ctx.value, at, bytes.length);
  } finally {
    m._free(at);
  }
  return settled(context, result);
}

function compile(context: QuickJSContext, source: string, filename: string): Uint8Array | null {
  const compiled = context.evalCode(source, filename, { compileOnly: true });
  if (compiled.error) {
    compiled.error.dispose();
    return null;
  }
  const { ctx, memory } = internals(context);
  const m = memory.module;
  const lengthAt = m._malloc(4);
  try {
    const written = m._QTS_WriteBytecode!(
      ctx.value,
      (compiled.value as unknown as { value: number }).value,
      lengthAt,
    );
    if (!written) return null;
    const bytes = m.HEAPU8.slice(written, written + m.HEAPU32[lengthAt >> 2]!);
    m._free(written);
    return bytes;
  } finally {
    m._free(lengthAt);
    compiled.value.dispose();
  }
}
