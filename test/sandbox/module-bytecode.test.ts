/**
 * A release's modules as bytecode: the publish-time check compiles them when asked (the own engine;
 * the stock one answers without), and a cold start given the pack evaluates it instead of the
 * source (shown by sources that would answer otherwise): imports, top-level await, error stacks
 * naming the release's files, and a pack that is cut short failing the load, not the thread.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import type { EngineName } from '../../src/sandbox/engine-variant.ts';
import { DEFAULT_INSTANCE_LIMITS, type InvocationResult } from '../../src/sandbox/protocol.ts';
import type { InvokeInput } from '../../src/sandbox/pool-slot.ts';
import { answerText } from '../_lib/sandbox.ts';

const SOURCES = {
  'server.js': `import { greet } from './lib/greet.js';
const config = await Promise.resolve({ who: 'bytecode' });
export default { fetch(request) {
  if (new URL(request.url).pathname === '/throw') return greet(null);
  return new Response(greet(config.who) + ' ' + [1, 2, 3].map((x) => x * 2).join(','));
} };`,
  'lib/greet.js': `export function greet(who) { if (!who) throw new Error('nobody to greet'); return 'hello ' + who; }`,
};
/** What the same release's source answers: a cold start that compiled it would say so. */
const OTHER_SOURCES = {
  'server.js': `export default { fetch() { return new Response('compiled from source'); } };`,
  'lib/greet.js': '',
};

const poolOf = (engine: EngineName) =>
  new SandboxPool({
    workers: 1,
    limits: { cpuMs: 2000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
    hardKillMs: 10_000,
    engine,
  });

function call(
  pool: SandboxPool,
  releaseId: string,
  extra: Partial<InvokeInput> & { sources: Record<string, string> },
  path = '/',
): Promise<InvocationResult> {
  const { sources, ...rest } = extra;
  return pool.invoke({
    handler: 'fetch',
    app: { app_id: 'app_bc', origin: 'http://app_bc.apps.localhost', release_id: releaseId },
    release: { releaseId, entry: 'server.js' },
    loadSources: async () => sources,
    request: { method: 'GET', url: `http://app_bc.apps.localhost${path}`, headers: [] },
    secrets: {},
    ...rest,
  });
}

async function compiled(pool: SandboxPool): Promise<Uint8Array | undefined> {
  const r = await call(pool, 'check_bc', { handler: 'load', compile: true, sources: SOURCES });
  assert.ok(r.ok, JSON.stringify(r.error));
  assert.equal(r.response?.headers, [['x-handlers', 'fetch']]);
  pool.evict('check_bc');
  return r.response?.body ? new Uint8Array(r.response.body) : undefined;
}

test('the own engine compiles a release to bytecode and a cold start runs it', async () => {
  const pool = poolOf('own');
  try {
    const pack = await compiled(pool);
    assert.ok(pack && pack.length > 100, 'a pack');
    const loadBytecode = async () => pack;
    const r = await call(pool, 'rel_bc', { sources: OTHER_SOURCES, loadBytecode });
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.is(answerText(r), 'hello bytecode 2,4,6');
    const thrown = await call(pool, 'rel_bc', { sources: OTHER_SOURCES, loadBytecode }, '/throw');
    assert.is(thrown.ok, false);
    assert.is(thrown.error?.message, 'Error: nobody to greet');
    assert.match(thrown.error?.stack ?? '', /lib\/greet\.js:1/);
    assert.match(thrown.error?.stack ?? '', /server\.js:4/);
    // a pack cut short fails that load with an error; the thread answers the next call
    const cut = await call(pool, 'rel_bc_cut', {
      sources: OTHER_SOURCES,
      loadBytecode: async () => pack.subarray(0, pack.length - 7),
    });
    assert.is(cut.ok, false);
    assert.is(cut.error?.kind, 'load');
    const after = await call(pool, 'rel_bc_after', { sources: SOURCES });
    assert.is(answerText(after), 'hello bytecode 2,4,6');
  } finally {
    await pool.close();
  }
});

test('the stock engine answers the check without bytecode and ignores a pack', async () => {
  const pool = poolOf('stock');
  try {
    assert.is(await compiled(pool), undefined);
    const r = await call(pool, 'rel_bc_stock', {
      sources: OTHER_SOURCES,
      loadBytecode: async () => new Uint8Array([1, 2, 3]),
    });
    assert.is(answerText(r), 'compiled from source');
  } finally {
    await pool.close();
  }
});

test.run();
