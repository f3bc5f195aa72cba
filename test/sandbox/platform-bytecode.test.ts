/**
 * The platform's own guest code (the prelude and its lazily loaded chunks) runs from bytecode
 * compiled once per sandbox thread (src/sandbox/script-bytecode.ts) and behaves as its source does:
 * instance after instance works, and an error thrown inside it still names the platform's file and
 * line, as from source, on the own engine and the stock one (which evaluates the source).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EngineName } from '../../src/sandbox/engine-variant.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const APP = `export default { async fetch() {
  const stackOf = (fn) => { try { fn(); return null; } catch (e) { return String(e.stack); } };
  const prelude = stackOf(() => new Response(null, { status: 99 }));
  const chunk = stackOf(() => new URLSearchParams('a=1').forEach(null));
  const params = new URLSearchParams('a=1&b=2');
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('x')));
  return Response.json({ prelude, chunk, keys: [...params.keys()], digest: digest.length, log: typeof console.log });
} };`;

for (const engine of ['own', 'stock'] as EngineName[])
  test(`${engine} engine: platform code answers and names its files in stacks, instance after instance`, async () => {
    const pool = new SandboxPool({
      workers: 1,
      limits: { cpuMs: 2000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
      hardKillMs: 10_000,
      engine,
    });
    try {
      const call = jsonCaller<{ prelude: string; chunk: string; keys: string[]; digest: number }>(
        pool,
        () => APP,
      );
      for (const release of ['rel_pb_1', 'rel_pb_2', 'rel_pb_3']) {
        const r = await call(release);
        assert.match(r.prelude, /<platform prelude>:\d+:\d+/);
        assert.match(r.chunk, /platform:url-search-params\.js:\d+:\d+/);
        assert.equal(r.keys, ['a', 'b']);
        assert.is(r.digest, 32);
      }
    } finally {
      await pool.close();
    }
  });

test.run();
