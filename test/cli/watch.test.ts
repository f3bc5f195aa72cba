/**
 * The folder watcher of `platform dev`: whatever the rhythm of saves, the content of the last one is
 * what a rebuild reads after the last change it is told of.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isIgnored, watchFolder } from '../../src/cli/dev/watch.ts';
import { waitFor } from '../_lib/apps.ts';

const dir = path.resolve('.data', 'test-scratch', `watch-${process.pid}`);
const file = path.join(dir, 'src', 'server.ts');

test.before(async () => {
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, 'start');
});
test.after(() => rm(dir, { recursive: true, force: true }));

/** Saves `contents` in turn, `gapMs` apart, as an editor (or a formatter after it) would. */
async function saveInTurn(contents: string[], gapMs: number) {
  for (const [i, text] of contents.entries()) {
    // the gap is the scenario (how quickly a person or a tool saves again), not a wait for a result
    if (i) await new Promise((r) => setTimeout(r, gapMs));
    await writeFile(file, text);
  }
}

for (const [count, gapMs] of [
  [2, 0],
  [2, 30],
  [2, 45],
  [5, 10],
] as const) {
  test(`${count} saves ${gapMs} ms apart: the last one is read after the last change event`, async () => {
    const read: string[] = [];
    // read at each event, as the rebuild does
    const watcher = await watchFolder(dir, (f) => {
      if (f === file) read.push(readFileSync(f, 'utf8'));
    });
    try {
      const saves = Array.from({ length: count }, (_, i) => `export default ${i}; // ${gapMs}`);
      const last = saves.at(-1);
      await saveInTurn(saves, gapMs);
      await waitFor(async () => read.at(-1) === last, 5_000).catch(() => {
        throw new Error(
          `the reads after change events saw ${JSON.stringify(read)}, not the last save`,
        );
      });
    } finally {
      await watcher.close();
    }
  });
}

test('what is not watched: dependencies, version control, the CLI state, other dot files', () => {
  const at = (rel: string) => isIgnored(dir, path.join(dir, rel));
  assert.is(at('src/server.ts'), false);
  assert.is(at('.env'), false);
  assert.is(at('.platformignore'), false);
  assert.is(at('node_modules/hono/index.js'), true);
  assert.is(at('.git/HEAD'), true);
  assert.is(at('.platform/dev.json'), true);
  assert.is(at('.DS_Store'), true);
  assert.is(at('public/.hidden/x.html'), true);
  assert.is(at(''), false);
});

test.run();
