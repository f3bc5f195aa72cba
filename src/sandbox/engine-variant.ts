/**
 * The QuickJS variant a sandbox thread loads, from the main thread's choice (engine.ts): both speak
 * quickjs-emscripten-core's FFI (the platform's build implements `@jitl`'s `QTS_*` functions,
 * engine/interface.c), and each runs in the thread's capped memory.
 */
import { readFileSync } from 'node:fs';
import { newVariant, RELEASE_SYNC, type QuickJSSyncVariant } from 'quickjs-emscripten';

/**
 * How many times an instance's stackBytes the platform's build may use of its C stack (instances.ts).
 * The engine measures only the WebAssembly shadow stack, and C recursion whose locals live in wasm
 * locals barely moves it: JSON.parse takes about 16 bytes of it a level and 300 of the thread's
 * native stack, so at 4x (131k levels) V8's stack ran out first, inside the engine, and the unwound
 * runtime leaked (test/runtime/crash-isolation.test.ts: a 500k-deep JSON body). 2x stops JSON at
 * 65k levels (about 20 MiB native) and JavaScript recursion at about 3,800 calls (stock: 2,900).
 */
export const OWN_ENGINE_STACK_FACTOR = 2;

/**
 * The sandbox thread's native stack for the platform's build (MiB): the engine's own check must
 * fire before V8's for every kind of recursion at the largest limit: JavaScript calls nest about
 * 1 KiB of native frames for each 270 bytes of engine stack (512 KiB x 2: about 4 MiB native),
 * JSON.parse about 20 times its engine bytes (about 20 MiB).
 */
export const OWN_ENGINE_NATIVE_STACK_MB = 32;

export type EngineName = 'stock' | 'own';

export type EngineChoice = { name: 'stock' } | { name: 'own'; wasm: string; glue: string };

export function engineVariant(
  choice: EngineChoice,
  wasmMemory: WebAssembly.Memory,
): QuickJSSyncVariant {
  if (choice.name === 'stock') return newVariant(RELEASE_SYNC, { wasmMemory });
  const own: QuickJSSyncVariant = {
    type: 'sync',
    importFFI: () => import('@jitl/quickjs-wasmfile-release-sync/ffi').then((m) => m.QuickJSFFI),
    importModuleLoader: () => import(choice.glue).then((m) => m.default),
  };
  const bytes = readFileSync(choice.wasm);
  const wasmBinary = bytes.buffer.slice(
    bytes.byteOffset,
    bytes.byteOffset + bytes.byteLength,
  ) as ArrayBuffer;
  return newVariant(own, { wasmMemory, wasmBinary });
}
