/**
 * Which QuickJS build the sandbox runs: the stock `@jitl` release variant, or with
 * `PLATFORM_ENGINE=own` the platform's own (`engine/dist/`, built from Debian's source by
 * `npm run build:engine`). Not yet the default: Debian's source is older than the stock variant's
 * and lacks some built-ins it has (docs/decisions/engine.md).
 * Chosen on the main thread, which knows where the files are; each sandbox thread gets the choice in
 * its workerData and loads it (engine-variant.ts).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EngineChoice } from './engine-variant.ts';

const DIST = new URL('../../engine/dist/', import.meta.url);

export function engineChoice(env: NodeJS.ProcessEnv = process.env): EngineChoice {
  const wasm = fileURLToPath(new URL('quickjs.wasm', DIST));
  if (env.PLATFORM_ENGINE !== 'own') return { name: 'stock' };
  if (!existsSync(wasm))
    throw new Error(`PLATFORM_ENGINE=own, but ${wasm} is not built: run npm run build:engine`);
  return { name: 'own', wasm, glue: new URL('quickjs.mjs', DIST).href };
}
