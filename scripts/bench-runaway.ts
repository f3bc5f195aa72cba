/**
 * `npm run bench:runaway`: how long long-running built-ins hold the engine after the CPU budget
 * (100 ms here, an interrupt handler on wall time) is spent, on the stock engine and on the
 * platform's own (engine/patches/0002-interrupt-polls.patch polls inside their loops). Each op in a
 * fresh runtime with a 256 MiB heap; prints milliseconds until the call returned and how it ended.
 */
import { engineModule } from '../src/sandbox/engine.ts';

const BUDGET_MS = 100;
const OPS: Record<string, string> = {
  'join of 1e9 holes': "new Array(1e9).join('x').length",
  "join('') of 3e7 holes": "new Array(3e7).join('').length",
  repeat: "'ab'.repeat(2e7).length",
  padStart: "''.padStart(3e7, 'ab').length",
  replaceAll: "'a'.repeat(5e6).replaceAll('a', 'bb').length",
  split: "'a,'.repeat(3e6).split(',').length",
  sort: 'Array.from({ length: 1e6 }, (_, i) => (i * 7919) % 1000003).sort().length',
  'JSON.parse': "JSON.parse('[' + '1,'.repeat(5e6) + '1]').length",
  'JSON.stringify': 'JSON.stringify(new Array(5e6).fill({ a: 1 })).length',
  'indexOf on holes': 'new Array(2e8).indexOf(1)',
  'includes on holes': 'new Array(2e8).includes(1)',
  fill: 'new Array(5e7).fill(0).length',
  'regexp backtracking': "/(a+)+$/.test('a'.repeat(30) + 'b')",
};

console.log(`| op | stock (ms) | own (ms) |\n| --- | ---: | ---: |`);
const modules = { stock: await engineModule('stock'), own: await engineModule('own') };
for (const [label, code] of Object.entries(OPS)) {
  const row: string[] = [];
  for (const name of ['stock', 'own'] as const) {
    const rt = modules[name].newRuntime();
    rt.setMemoryLimit(256 << 20);
    rt.setMaxStackSize(1 << 20);
    const ctx = rt.newContext();
    const t0 = performance.now();
    rt.setInterruptHandler(() => performance.now() - t0 > BUDGET_MS);
    const r = ctx.evalCode(code);
    const ms = performance.now() - t0;
    let how: string;
    if (r.error) {
      const e = ctx.dump(r.error) as { message?: string } | string;
      how = typeof e === 'string' ? e : (e?.message ?? 'error');
      r.error.dispose();
    } else {
      how = 'finished';
      r.value.dispose();
    }
    row.push(`${ms.toFixed(0)} (${how})`);
    ctx.dispose();
    rt.dispose();
  }
  console.log(`| ${label} | ${row.join(' | ')} |`);
}
