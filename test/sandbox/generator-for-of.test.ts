/**
 * A `yield` inside a for-of loop's iterable expression compiles and runs on the platform's own
 * build as in Node (engine/patches/0005): the engine closed the loop's iterator before it existed
 * when such a generator was resumed by return(), and refused to compile the function at all
 * ("stack underflow"), which kept any bundle holding one (superstruct, inside Next.js) from loading.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const CASES = `
const out = [];
function* spread(a) { for (const x of (yield* a, [1])) yield x }
out.push([...spread([7, 8])]);
function* closing() { try { for (const x of (yield 'first', [1, 2])) yield x } finally { out.push('finally') } }
const c = closing(); out.push(c.next().value, c.return(5));
function* nested() { for (const a of [10, 20]) { for (const b of (yield a, [a + 1])) yield b } }
const n = nested(); out.push(n.next().value, n.next().value, n.next().value, n.return(9));
function* refiner(items) { for (const item of (yield* items.map((i) => i * 2), items)) yield { item } }
out.push([...refiner([1, 2])]);
return out;`;

test('a yield in a for-of head answers as in Node', async () => {
  const expected = JSON.parse(JSON.stringify(new Function(CASES)()));
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
    hardKillMs: 5000,
    engine: 'own',
  });
  try {
    const r = await invokeSource(
      pool,
      'rel_generator_for_of',
      `export default { fetch() { return Response.json((() => { ${CASES} })()); } };`,
    );
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.equal(JSON.parse(answerText(r)), expected);
  } finally {
    await pool.close();
  }
});

test.run();
