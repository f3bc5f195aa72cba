/**
 * The QuickJS variant a sandbox thread loads, from the main thread's choice (engine.ts): both speak
 * quickjs-emscripten-core's FFI (the platform's build implements `@jitl`'s `QTS_*` functions,
 * engine/interface.c), and each runs in the thread's capped memory.
 */
import { readFileSync } from 'node:fs';
import { newVariant, RELEASE_SYNC, type QuickJSSyncVariant } from 'quickjs-emscripten';

/**
 * How many times an instance's stackBytes the platform's build may use of its C stack (instances.ts):
 * about 3,800 JavaScript calls at 512 KiB (stock: 2,900), JSON nesting stops at about 65,000 levels.
 * Not 4x: with about 100,000 objects alive, a stack overflow thrown after an await leaves the runtime
 * unable to free (on the stock variant too, at 200,000: docs/decisions/engine.md), and at 4x a deep
 * JSON body built that many before the check stopped it.
 */
export const OWN_ENGINE_STACK_FACTOR = 2;

/**
 * The sandbox thread's native stack for the platform's build (MiB): its calls into the engine nest
 * about 1 KiB of native frames for each 270 bytes of engine stack, so the engine's own check must
 * fire first for the largest limit (512 KiB x 2 = 1 MiB of engine stack: about 4 MiB native).
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
