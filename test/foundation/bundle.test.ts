/**
 * Where Node does not strip types (20, 22), a TypeScript entry runs from a cached esbuild bundle
 * (src/lib/bundle.mjs). What a developer relies on: an edited source is what runs next time, each
 * module's `import.meta` still names its own file, a dynamic import loads, and an error's stack
 * names the TypeScript file and line. Checked on every Node (the bundle is made and run directly).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bundled } from '../../src/lib/bundle.mjs';

const run = promisify(execFile);
const dir = path.resolve('.data', 'test-scratch', `bundle-${process.pid}`);
const entry = path.join(dir, 'entry.ts');
const dep = path.join(dir, 'lib', 'dep.ts');

async function write(depValue: string): Promise<void> {
  await mkdir(path.dirname(dep), { recursive: true });
  await writeFile(
    dep,
    `export const value: string = ${JSON.stringify(depValue)};\n` +
      `export const where = import.meta.url;\nexport const folder = import.meta.dirname;\n`,
  );
  await writeFile(
    entry,
    `import { value, where, folder } from './lib/dep.ts';\n` +
      `const lazy = await import('./lib/lazy.ts');\n` +
      `console.log(JSON.stringify({ value, where, folder, lazy: lazy.lazy, self: import.meta.filename }));\n` +
      `if (process.argv.includes('--throw')) throw new Error('thrown on purpose');\n`,
  );
  await writeFile(path.join(dir, 'lib', 'lazy.ts'), `export const lazy: number = 42;\n`);
}

async function runBundle(...args: string[]) {
  const [file] = await bundled([entry]);
  const { stdout } = await run(process.execPath, [file!, ...args]);
  return { file: file!, out: JSON.parse(stdout) };
}

test('the bundle runs the sources, and import.meta names each module’s own file', async () => {
  await write('first');
  const { file, out } = await runBundle();
  assert.is(out.value, 'first');
  assert.is(out.lazy, 42, 'a dynamic import loads from its chunk');
  assert.is(out.where, pathToFileURL(dep).href);
  assert.is(out.folder, path.dirname(dep));
  assert.is(out.self, entry);
  assert.ok(file.includes(`${path.sep}node_modules${path.sep}.cache${path.sep}`), file);
});

test('an edited source is what runs next, not the cached bundle', async () => {
  await write('first');
  const before = await runBundle();
  await write('second');
  const after = await runBundle();
  assert.is(after.out.value, 'second');
  assert.is.not(after.file, before.file);
  // unchanged sources reuse the bundle
  assert.is((await runBundle()).file, after.file);
});

test('an error’s stack names the TypeScript file and line (run as npm scripts run)', async () => {
  await write('first');
  const err = (await run(process.execPath, ['src/lib/run-typescript.mjs', entry, '--throw']).catch(
    (e) => e,
  )) as { code: number; stderr: string };
  assert.is(err.code, 1);
  assert.match(err.stderr, 'thrown on purpose');
  assert.match(err.stderr, `${entry}:4`);
});

test.after(() => rm(dir, { recursive: true, force: true }));
test.run();
