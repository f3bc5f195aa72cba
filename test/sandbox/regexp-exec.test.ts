/**
 * RegExp.prototype.exec on the platform's own build answers as V8 does: the result array built with
 * its final shape at once (engine/patches/0003) and patterns anchored with ^ tried only where the
 * search starts (0004). The same code runs here in Node and in the sandbox; the answers must match.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { answerText, invokeSource } from '../_lib/sandbox.ts';

const CASES = `
const out = [];
const show = (m) => m === null ? null : { a: [...m], len: m.length, index: m.index, input: m.input, groups: m.groups,
  keys: Object.keys(m), own: Object.getOwnPropertyNames(m), indices: m.indices, array: Array.isArray(m),
  proto: Object.getPrototypeOf(m) === Array.prototype };
const t = (re, s, li) => { if (li !== undefined) re.lastIndex = li; const m = re.exec(s); out.push([String(re), li ?? null, show(m), re.lastIndex]); };
t(/(a)(b)?/, 'xab'); t(/(a)(b)?/, 'xa'); t(/(?<y>\\d{4})-(?<m>\\d\\d)/, 'on 2024-05!'); t(/(?<y>\\d{4})-(?<m>\\d\\d)/d, 'on 2024-05!');
t(/z/, 'abc'); t(/abc/, 'abc'); t(new RegExp('(.)'.repeat(50)), 'x'.repeat(60));
const m = /(b)/.exec('abc'); m.push('x'); m.index = 5; m.foo = 1; m.length = 5; out.push(show(m));
t(/^ab/, 'abc'); t(/^ab/, 'xab'); t(/^ab/g, 'abab', 0); t(/^ab/g, 'abab', 2); t(/^ab/y, 'abab', 2); t(/^ab/y, 'abab', 0);
t(/^ab/m, 'x\\nab'); t(/^ab/gm, 'x\\nab', 1); t(/^a|b/, 'xb'); t(/(^a)|b/, 'xb'); t(/^(?:a|b)c/, 'bc');
t(/^(?:a|b)c/, 'xbc'); t(/^$/, ''); t(/^/, 'abc'); t(/^/g, 'abc', 1); t(/^\\s*(\\w+)/, '   hello world');
t(/^(a+)+$/, 'aaaa'); t(/^(?=a)a/, 'ab'); t(/^(?<n>\\d+)/, '42x'); t(/^ab/i, 'ABc'); t(/^é/u, 'éa');
out.push('abc'.replace(/^a/g, 'X'), 'a\\na'.replace(/^a/gm, 'X'), 'a,b'.split(/^a/), 'xab'.search(/^ab/),
  'abab'.match(/^ab/g), [...'abab'.matchAll(/^ab/g)].length, /^ab/.test('zzzzab'), /^ab/.test('ab'),
  'a1b2c3'.match(/\\d/g), [...'a1b2'.matchAll(/(\\w)(\\d)/g)].map(show), 'x-y_z'.replace(/(\\w)/g, '[$1]'));
return out;`;

test('exec, match, replace, split and search answer as in Node', async () => {
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
      'rel_regexp_exec',
      `export default { fetch() { return Response.json((() => { ${CASES} })()); } };`,
    );
    assert.ok(r.ok, JSON.stringify(r.error));
    const got = JSON.parse(answerText(r)) as unknown[];
    assert.is(got.length, expected.length);
    for (const [i, g] of got.entries()) assert.equal(g, expected[i], `case ${i}`);
  } finally {
    await pool.close();
  }
});

test.run();
