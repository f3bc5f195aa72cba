/** See bundle.mjs. */
import type { BuildOptions } from 'esbuild';
export declare const NODE_BUNDLE: BuildOptions & {
  absWorkingDir: string;
  write: false;
  metafile: true;
};
export declare function hashFiles(files: string[]): string;
export declare function bundled(entries: string[]): Promise<string[]>;
