/**
 * Which QuickJS build the sandbox runs: the platform's own (`engine/dist/`, built from Debian's
 * source by `npm run build:engine`), the default on Node, or with `PLATFORM_ENGINE=stock` the stock
 * `@jitl` release variant, which is also the fallback where the build's files are missing and the
 * default on Deno
 * (docs/decisions/engine.md says why the own build is the default and what it changes).
 * Chosen on the main thread, which knows where the files are; each sandbox thread gets the choice in
 * its workerData and loads it (engine-variant.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onDeno } from '../lib/on-deno.ts';
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten';
import { type EngineChoice, type EngineName, engineVariant } from './engine-variant.ts';

const DIST = new URL('../../engine/dist/', import.meta.url);

export function engineChoice(env: NodeJS.ProcessEnv = process.env): EngineChoice {
  const wasm = fileURLToPath(new URL('quickjs.wasm', DIST));
  // on Deno a worker's native stack cannot be raised, so the own build would allow a quarter of the
  // recursion the stock one does there (engine-variant.ts): the stock variant stays Deno's default
  const wanted = env.PLATFORM_ENGINE ?? (onDeno ? 'stock' : 'own');
  if (wanted === 'stock') return { name: 'stock' };
  if (wanted !== 'own')
    throw new Error(`PLATFORM_ENGINE=${wanted}: expected "own" (the default) or "stock"`);
  if (!existsSync(wasm)) {
    if (env.PLATFORM_ENGINE === 'own')
      throw new Error(`PLATFORM_ENGINE=own, but ${wasm} is not built: run npm run build:engine`);
    return { name: 'stock' };
  }
  return { name: 'own', wasm, glue: new URL('quickjs.mjs', DIST).href };
}

const buildIds = new Map<string, string>();

/**
 * What module bytecode made by this engine is keyed by (module-bytecode.ts): the own build's
 * `.wasm` hash, which changes with any change to the engine; undefined for the stock variant, which
 * cannot write or read it.
 */
export function engineBuildId(choice: EngineChoice): string | undefined {
  if (choice.name !== 'own') return undefined;
  let id = buildIds.get(choice.wasm);
  if (!id) {
    id = `own-${createHash('sha256').update(readFileSync(choice.wasm)).digest('hex').slice(0, 32)}`;
    buildIds.set(choice.wasm, id);
  }
  return id;
}

/** One build's engine module on its own memory, outside the sandbox (the engine benchmarks). */
export async function engineModule(name: EngineName): Promise<QuickJSWASMModule> {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 16384 });
  return newQuickJSWASMModuleFromVariant(
    engineVariant(engineChoice({ PLATFORM_ENGINE: name }), memory),
  );
}
