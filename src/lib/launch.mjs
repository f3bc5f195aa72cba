// @ts-check
/**
 * Starts a TypeScript entry (the service, the CLI) the quickest way this Node allows: Node's compile
 * cache on (Node 22+, in the OS's temp dir unless NODE_COMPILE_CACHE says where), so a start after
 * the first skips compiling the modules it loads; the TypeScript read by Node itself where it strips
 * types (node-typescript.mjs), by tsx's loader elsewhere. Plain JavaScript: it decides how the
 * TypeScript is read.
 */
import module from 'node:module';
import { nodeStripsTypes } from './node-typescript.mjs';

/** @param {URL} entry */
export async function launch(entry) {
  module.enableCompileCache?.();
  if (!nodeStripsTypes) (await import('tsx/esm/api')).register();
  await import(entry.href);
}
