/**
 * Standard built-ins newer than the platform's own QuickJS build (Iterator helpers, Set methods,
 * Float16Array, Error.isError, RegExp.escape, Math.sumPrecise, Promise.try, getOrInsert): an app
 * gets them on either engine and they answer the same (natively on the stock variant, from the
 * lazily loaded `es-builtins` chunk on the own build); QuickJS's non-standard helpers are gone.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const APP = `export default { async fetch() {
  const it = (xs) => xs.values();
  const out = {
    helpers: it([1, 2, 3, 4, 5]).take(4).map((x) => x * 2).filter((x) => x > 2).drop(1).toArray(),
    takeAfterHelper: (() => { try { return it([1, 2, 3]).map((x) => x).take(2).toArray(); } catch (e) { return String(e); } })(),
    flatMap: it(['a b', 'c']).flatMap((s) => s.split(' ')).toArray(),
    reduce: it([1, 2, 3]).reduce((a, b) => a + b),
    some: [it([1, 2]).some((x) => x > 1), it([1, 2]).every((x) => x > 1), it([1, 2]).find((x) => x > 1)],
    from: Iterator.from({ i: 0, next() { return this.i < 2 ? { value: this.i++, done: false } : { value: undefined, done: true }; } }).toArray(),
    concat: Iterator.concat([1], new Set([2, 3])).toArray(),
    instance: [it([]) instanceof Iterator, typeof Iterator.prototype.map, new Map().keys().map((x) => x).toArray().length],
    set: [
      [...new Set([1, 2]).union(new Set([2, 3]))],
      [...new Set([1, 2]).intersection(new Set([2, 3]))],
      [...new Set([1, 2]).difference(new Set([2, 3]))],
      [...new Set([1, 2]).symmetricDifference(new Set([2, 3]))],
      new Set([1]).isSubsetOf(new Set([1, 2])),
      new Set([1, 2]).isSupersetOf(new Set([3])),
      new Set([1]).isDisjointFrom(new Set([2])),
    ],
    upsert: (() => { const m = new Map([['a', 1]]); const w = new WeakMap(); const k = {};
      return [m.getOrInsert('a', 9), m.getOrInsert('b', 2), m.getOrInsertComputed('c', (key) => key + '!'), w.getOrInsert(k, 5), w.getOrInsertComputed(k, () => 6)]; })(),
    try: [await Promise.try((a) => a * 2, 21), await Promise.try(() => { throw new Error('no'); }).catch((e) => e.message)],
    isError: [Error.isError(new TypeError('x')), Error.isError({ message: 'x' }), Error.isError(new DOMException('d'))],
    escape: RegExp.escape('a.b*c?'),
    sum: [Math.sumPrecise([1e20, 0.1, -1e20]), Math.sumPrecise([0.1, 0.2, 0.3])],
    f16: (() => { const f = new Float16Array([1.337, 65504, 70000]); const d = new DataView(new ArrayBuffer(2)); d.setFloat16(0, 0.1);
      return [Math.f16round(1.337), [...f], f.length, f.BYTES_PER_ELEMENT, d.getFloat16(0), Object.prototype.toString.call(f)]; })(),
    nonStandard: [typeof Object.__getClass, typeof ''.__quote],
  };
  return Response.json(out);
} };`;

const EXPECTED = {
  helpers: [6, 8],
  takeAfterHelper: [1, 2],
  flatMap: ['a', 'b', 'c'],
  reduce: 6,
  some: [true, false, 2],
  from: [0, 1],
  concat: [1, 2, 3],
  instance: [true, 'function', 0],
  set: [[1, 2, 3], [2], [1], [1, 3], true, false, true],
  upsert: [1, 2, 'c!', 5, 5],
  try: [42, 'no'],
  isError: [true, false, true],
  escape: '\\x61\\.b\\*c\\?',
  sum: [0.1, 0.6],
  f16: [1.3369140625, [1.3369140625, 65504, null], 3, 2, 0.0999755859375, '[object Float16Array]'],
  nonStandard: ['undefined', 'undefined'],
};

for (const engine of ['stock', 'own'] as const) {
  test(`${engine} engine: the newer built-ins answer as the standard says`, async () => {
    const pool = new SandboxPool({
      workers: 1,
      limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
      hardKillMs: 5000,
      engine,
    });
    try {
      const r = await invokeSource(pool, `rel_es_${engine}`, APP);
      assert.ok(r.ok, JSON.stringify(r.error));
      // Infinity is null in JSON: Float16Array's 70000 rounds to Infinity
      const got = JSON.parse(answerText(r));
      // the stock variant's take() closes an array iterator through a `return` it does not have
      if (engine === 'stock') assert.is(got.takeAfterHelper, 'TypeError: not a function');
      assert.equal(got, {
        ...EXPECTED,
        ...(engine === 'stock' ? { takeAfterHelper: got.takeAfterHelper } : {}),
      });
    } finally {
      await pool.close();
    }
  });
}

test.run();
