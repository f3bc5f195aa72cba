/**
 * TextEncoder.encodeInto into a buffer too small for the string writes what fits, ending between
 * characters, and reports how much of the string that was: React's streaming renderer fills fixed
 * buffers with it and writes the rest into the next one, so a wrong `read` cut a page's HTML short.
 * The same calls run here in Node and in the sandbox; the answers must match.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = [];
const enc = new TextEncoder();
const strings = ['hello world', 'héllo wörld', '€uro €uro', 'a😀b😀c', 'x\\ud800y', '日本語のテキスト', ''];
for (const s of strings)
  for (const size of [0, 1, 2, 3, 4, 5, 7, 64]) {
    const dest = new Uint8Array(size).fill(255);
    const r = enc.encodeInto(s, dest);
    out.push([s, size, r.read, r.written, Array.from(dest)]);
  }
// a renderer's loop: fill 5-byte buffers until the string is written
const s = 'https://vercel.com/templates?framework=next.js&utm=é€😀';
let rest = s, bytes = [];
while (rest.length) { const d = new Uint8Array(5); const r = enc.encodeInto(rest, d); if (!r.read) break; bytes.push(...d.subarray(0, r.written)); rest = rest.slice(r.read); }
out.push(new TextDecoder().decode(new Uint8Array(bytes)));
return out;`;

test('encodeInto answers as Node does, and a loop over small buffers writes the whole string', async () => {
  const expected = JSON.parse(JSON.stringify(new Function(CASES)()));
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
    hardKillMs: 5000,
  });
  try {
    const call = jsonCaller<unknown[]>(
      pool,
      () => `export default { fetch() { return Response.json((() => { ${CASES} })()); } };`,
    );
    const got = await call('rel_encode_into');
    assert.is(got.length, expected.length);
    for (const [i, g] of got.entries()) assert.equal(g, expected[i], `case ${i}`);
    assert.is(got.at(-1), 'https://vercel.com/templates?framework=next.js&utm=é€😀');
  } finally {
    await pool.close();
  }
});

test.run();
