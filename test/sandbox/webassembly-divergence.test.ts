/**
 * WebAssembly is the engine's documented divergence: the global stays absent (so a library's
 * `typeof WebAssembly` check picks its JavaScript path), and code that uses it anyway fails with
 * an error that says why, in the call's error as the event log records it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 5000,
});

test('a feature check finds no WebAssembly', async () => {
  const r = await invokeSource(
    pool,
    'rel_wasm_check',
    `export default { fetch() { return new Response(typeof WebAssembly + ' ' + ('WebAssembly' in globalThis)); } };`,
  );
  assert.is(answerText(r), 'undefined false');
});

test('using it says the engine has none, in the handler and at load', async () => {
  const inHandler = await invokeSource(
    pool,
    'rel_wasm_use',
    `export default { async fetch() { await WebAssembly.instantiate(new Uint8Array(8)); return new Response('no'); } };`,
  );
  assert.not.ok(inHandler.ok, JSON.stringify(inHandler.error));
  assert.match(
    inHandler.error?.message ?? '',
    /'WebAssembly' is not defined.*QuickJS, which has no WebAssembly/,
  );
  const atLoad = await invokeSource(
    pool,
    'rel_wasm_load',
    `const m = new WebAssembly.Module(new Uint8Array(8)); export default { fetch() { return new Response('no'); } };`,
  );
  assert.not.ok(atLoad.ok);
  assert.match(atLoad.error?.message ?? '', /QuickJS, which has no WebAssembly/);
});

test('FileReader is not provided, as on workerd: Blob has promise methods for what it does', async () => {
  const r = await invokeSource(
    pool,
    'rel_no_filereader',
    `export default { async fetch() { return new Response(typeof FileReader + ' ' + (await new Blob(['x']).text())); } };`,
  );
  assert.is(answerText(r), 'undefined x');
});

test.after(() => pool.close());
test.run();
