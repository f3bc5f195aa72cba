/**
 * Fixes to npm libraries the guest bundles, applied as esbuild loads them: each replaces one exact
 * piece of the library's text and fails the build if that text is gone (a new version decides again).
 *
 * event-target-shim 6.0.2: a `once` listener reached after an earlier listener of the same dispatch
 * removed another one was removed by its index in the array being iterated, but the removal had
 * made a new array (copy-on-write): the index pointed past its end and dispatchEvent threw
 * ("cannot read property 'flags' of undefined"). Next.js aborts a signal whose listeners do this.
 */
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

type Fix = { file: RegExp; find: string; replace: string };

const FIXES: Fix[] = [
  {
    file: /[\\/]event-target-shim[\\/]index\.mjs$/,
    find: 'if (isOnce(listener) && removeListenerAt(list, i, !cow)) {',
    // once the list was copied, remove from the copy (by identity): the array iterated stays as it is
    replace:
      'if (isOnce(listener) && (list.listeners === listeners ? removeListenerAt(list, i, !cow) : (removeListenerAt(list, list.listeners.indexOf(listener), true), false))) {',
  },
];

export const libraryFixes: Plugin = {
  name: 'library-fixes',
  setup(build) {
    for (const fix of FIXES)
      build.onLoad({ filter: fix.file }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        if (!text.includes(fix.find))
          throw new Error(`${args.path}: the text library-fixes.ts replaces is gone`);
        return { contents: text.replace(fix.find, fix.replace), loader: 'js' };
      });
  },
};

/** What a build with these fixes depends on (the guest's cache key). */
export const LIBRARY_FIXES_KEY = JSON.stringify(
  FIXES.map((f) => [String(f.file), f.find, f.replace]),
);
