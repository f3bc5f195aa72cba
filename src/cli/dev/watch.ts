/**
 * The folder `platform dev` watches: every save reaches `onChange`, the last of a burst included.
 */
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

const IGNORED_DIRS = new Set(['node_modules', '.git', '.platform']);

/** Ignored: dependencies, version control, the CLI's own state, and dot files other than `.env` and `.platformignore`. */
export function isIgnored(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  if (!rel) return false;
  return rel
    .split(path.sep)
    .some(
      (p) => IGNORED_DIRS.has(p) || (p.startsWith('.') && p !== '.env' && p !== '.platformignore'),
    );
}

/**
 * Watches `dir`; resolves once the watcher sees the folder (a save before then would go unseen).
 *
 * chokidar drops a file's change that follows its previous one within 50 ms, so a second save that
 * quickly (a formatter rewriting on save, an editor's save-all) would never be published if the
 * rebuild had already read the first. Waiting for the file to stay unchanged for a moment
 * (`awaitWriteFinish`) takes that throttle out of the path: the event comes after the last write.
 */
export async function watchFolder(
  dir: string,
  onChange: (file: string) => void,
): Promise<FSWatcher> {
  const watcher = watch(dir, {
    ignoreInitial: true,
    ignored: (file: string) => isIgnored(dir, file),
    awaitWriteFinish: { stabilityThreshold: 20, pollInterval: 10 },
  });
  watcher.on('all', (_event, file) => onChange(file));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return watcher;
}
