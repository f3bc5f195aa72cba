/**
 * The QuickJS variant a sandbox thread loads, from the main thread's choice (engine.ts): both speak
 * quickjs-emscripten-core's FFI (the platform's build implements `@jitl`'s `QTS_*` functions,
 * engine/interface.c), and each runs in the thread's capped memory.
 */
import { readFileSync } from 'node:fs';
import { newVariant, RELEASE_SYNC, type QuickJSSyncVariant } from 'quickjs-emscripten';

/**
 * How many times an instance's stackBytes the platform's build may use of its C stack (instances.ts):
 * about 7,700 JavaScript calls at 512 KiB (stock: 2,900); JSON nesting stops at about 131,000 levels.
 */
export const OWN_ENGINE_STACK_FACTOR = 4;

/**
 * The sandbox thread's native stack for the platform's build (MiB): its calls into the engine nest
 * about 1 KiB of native frames for each 270 bytes of engine stack, so the engine's own check must
 * fire first for the largest limit (512 KiB x 4 = 2 MiB of engine stack: about 8 MiB native).
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
