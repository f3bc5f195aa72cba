/**
 * `npm run bench:engine`: the bare engine loop, the platform's own QuickJS build (engine/dist/)
 * against the stock `@jitl` release variant, on the same workloads in interleaved rounds (no
 * platform around them: one context each, code evaluated whole). Prints each workload's median
 * milliseconds and the ratio.
 */
import type { QuickJSContext } from 'quickjs-emscripten';
import { engineModule } from '../src/sandbox/engine.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 9);

/** Each a function body that returns its answer (both engines must give the same). */
const WORKLOADS: Record<string, string> = {
  'calls (fib 25)':
    'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); } return fib(25);',
  'strings (200k concatenations)':
    'let s = 0; for (let i = 0; i < 200000; i++) s += String(i).length; return s;',
  'JSON (50k objects round trip)':
    "const o = []; for (let i = 0; i < 50000; i++) o.push({ id: i, name: 'n' + i, tags: ['a', 'b'] }); return JSON.parse(JSON.stringify(o)).filter((x) => x.id % 3).length;",
  'regexp (40k matches)':
    "const re = /([a-z]+)(\\d+)/g; let m = 0; const t = 'abc123 def456 '.repeat(20000); while (re.exec(t)) m++; return m;",
  'sort (100k numbers)':
    'const a = []; for (let i = 0; i < 100000; i++) a.push((i * 7919) % 100003); return a.sort((x, y) => x - y)[500];',
};

async function contextOf(name: 'own' | 'stock'): Promise<QuickJSContext> {
  return (await engineModule(name)).newContext();
}

const engines = { stock: await contextOf('stock'), own: await contextOf('own') };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

console.log(`bare engine, ${ROUNDS} interleaved rounds (median ms)`);
console.log('| workload | stock | own | own ÷ stock |\n| --- | ---: | ---: | ---: |');
for (const [label, code] of Object.entries(WORKLOADS)) {
  const times = { stock: [] as number[], own: [] as number[] };
  const answers = new Set<string>();
  for (let round = 0; round < ROUNDS; round++)
    for (const name of ['stock', 'own'] as const) {
      const ctx = engines[name];
      const t = performance.now();
      const r = ctx.evalCode(`(() => { ${code} })()`);
      times[name].push(performance.now() - t);
      answers.add(JSON.stringify(ctx.dump(ctx.unwrapResult(r))));
    }
  if (answers.size !== 1)
    throw new Error(`${label}: the engines answered differently: ${[...answers]}`);
  const [s, o] = [median(times.stock), median(times.own)];
  console.log(`| ${label} | ${s.toFixed(1)} | ${o.toFixed(1)} | ${(o / s).toFixed(2)} |`);
}
