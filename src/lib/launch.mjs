// @ts-check
/**
 * Starts a TypeScript entry (the service, the CLI, the test runner and its files) the quickest way
 * this Node allows: Node's compile cache on (Node 22+, in the OS's temp dir unless
 * NODE_COMPILE_CACHE says where), so a start after the first skips compiling the modules it loads;
 * the TypeScript read by Node itself where it strips types (node-typescript.mjs), elsewhere run
 * from a cached esbuild bundle (bundle.mjs), or through tsx's loader where the bundle cannot be
 * made (a read-only install). Plain JavaScript: it decides how the TypeScript is read.
 */
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeStripsTypes } from './node-typescript.mjs';

/** @param {URL} entry */
export async function launch(entry) {
  module.enableCompileCache?.();
  if (nodeStripsTypes) return void (await import(entry.href));
  let file;
  try {
    const { bundled } = await import('./bundle.mjs');
    [file] = await bundled([fileURLToPath(entry)]);
  } catch {
    // a read-only install, or an entry outside this checkout: the sources through tsx
    (await import('tsx/esm/api')).register();
    return void (await import(entry.href));
  }
  // stack traces name the TypeScript files and lines
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(file).href);
}
