/**
 * The sandbox thread starts from one bundled file (src/sandbox/worker-bundle.ts), rebuilt when its
 * sources change, and without the main thread's TypeScript loader.
 */
import { engineChoice } from '../../src/sandbox/engine.ts';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  sandboxWorkerExecArgv,
  sandboxWorkerUrl,
  workerBundle,
} from '../../src/sandbox/worker-bundle.ts';

const manifestOf = (file: string) =>
  JSON.parse(readFileSync(path.join(path.dirname(file), 'manifest.json'), 'utf8')) as {
    hash: string;
    inputs: string[];
    file: string;
  };

test('the bundle is built from worker.ts and every module it imports, npm packages left as imports', () => {
  const file = workerBundle();
  assert.ok(existsSync(file));
  assert.match(
    file,
    `${path.sep}node_modules${path.sep}.cache${path.sep}platform-sandbox${path.sep}`,
  );
  const { inputs } = manifestOf(file);
  for (const f of ['src/sandbox/worker.ts', 'src/sandbox/calls.ts', 'src/sandbox/guest/build.ts'])
    assert.ok(inputs.includes(f), f);
  assert.not.ok(
    inputs.some((f) => f.includes('node_modules')),
    'no npm package is bundled',
  );
  assert.match(readFileSync(file, 'utf8'), /from "quickjs-emscripten"/);
  assert.is(sandboxWorkerUrl().pathname, file);
});

test('a bundle whose sources changed is built again', () => {
  const file = workerBundle();
  const manifest = path.join(path.dirname(file), 'manifest.json');
  const good = manifestOf(file);
  // as if a source had changed since: the recorded hash no longer matches the inputs
  writeFileSync(manifest, JSON.stringify({ ...good, hash: 'stale' }));
  assert.is(workerBundle(), file, 'the same sources make the same file');
  assert.is(manifestOf(file).hash, good.hash, 'and the manifest is current again');
});

test("a thread's flags are the process's without tsx", () => {
  assert.equal(
    sandboxWorkerExecArgv(['--import', 'tsx', '--max-old-space-size=512', '--import=tsx']),
    ['--max-old-space-size=512'],
  );
  assert.equal(
    sandboxWorkerExecArgv([
      '--require',
      './x.cjs',
      '--import',
      'file:///a/node_modules/tsx/dist/loader.mjs',
    ]),
    ['--require', './x.cjs'],
  );
});

test('a thread started from the bundle comes up and says it is ready', async () => {
  const state = new Float64Array(new SharedArrayBuffer(64 * 8));
  const worker = new Worker(sandboxWorkerUrl(), {
    execArgv: sandboxWorkerExecArgv(),
    workerData: {
      state: state.buffer,
      maxInstances: 10,
      instanceBudgetBytes: 64 << 20,
      limits: { memoryBytes: 32 << 20, cpuMs: 100, stackBytes: 512 << 10 },
      memoryBytes: 256 << 20,
      engine: engineChoice(),
    },
  });
  try {
    const first = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.equal((first as { t: string }).t, 'ready');
  } finally {
    await worker.terminate();
  }
});

test.run();
