/**
 * Valid code the engine's compiler refuses, published through the CLI: a generator with `yield` in
 * a `for…of` head (minified superstruct, inside Next.js's server, has it) failed the whole module
 * with "stack underflow". The CLI's bundle moves such a head into a temporary; the answers equal
 * what Node computes from the same source.
 */
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hoistYieldFromForOf } from '../../src/cli/quickjs-workarounds.ts';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-engine-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

/** Generators in the shapes minifiers write, each run to its end with values sent in. */
const LIB = `
export function* inner() { const got = yield 'asked'; return got; }
export function* refine(list) {
  for (const x of (yield* inner(), list)) yield x * 2;
}
export function* labelled(rows) {
  outer: for (const row of rows) {
    for (const cell of yield row) { if (cell < 0) continue outer; yield cell; }
  }
}
export function* guarded(on, list) {
  if (on) for (var v of (yield 'pick', list)) yield v + 1;
  else yield 'off';
}
export function* nested(list) {
  for (const f of [function* () { yield 'inner fn'; }]) yield* f();
  for (const y of (yield* (function* () { for (const z of yield 'deep') yield z; })(), list)) yield y;
}
export async function* streamed(list) {
  for await (const s of yield list) yield s.toUpperCase();
}
export function runAll() {
  const drive = (g, sends) => { const out = []; let r = g.next(); let i = 0; while (!r.done) { out.push(r.value); r = g.next(sends[i++]); } out.push(['done', r.value]); return out; };
  return {
    refine: drive(refine([1, 2, 3]), ['a', 'b', 'c', 'd']),
    labelled: drive(labelled(['r1', 'r2']), [[1, -1, 2], null, [3, 4], null, null]),
    guarded: [drive(guarded(true, [5, 6]), []), drive(guarded(false, []), [])],
    nested: drive(nested([7]), [undefined, [8, 9]]),
  };
}
`;

test('the rewrite keeps what the code computes (Node runs both)', async () => {
  const fixed = hoistYieldFromForOf(LIB);
  assert.is.not(fixed, LIB, 'the shapes are rewritten');
  assert.not.match(fixed, /of \(yield/, 'no yield is left in a for…of head');
  const load = (src: string) =>
    import(`data:text/javascript;base64,${Buffer.from(src).toString('base64')}`);
  const [a, b] = [await load(LIB), await load(fixed)];
  assert.equal(b.runAll(), a.runAll());
  const collect = async (m: { streamed(l: string[]): AsyncGenerator }) => {
    const g = m.streamed([]);
    const out: unknown[] = [(await g.next()).value];
    for (let r = await g.next(['x', 'y']); !r.done; r = await g.next()) out.push(r.value);
    return out;
  };
  assert.equal(await collect(b), await collect(a));
  const plain = 'function* g(l) { for (const x of l) yield x; }';
  assert.is(hoistYieldFromForOf(plain), plain, 'a loop with no yield in its head is left alone');
});

test('a server with yield in a for…of head publishes and answers as Node does', async () => {
  const dir = await writeProject(work, 'yield-head', {
    'wrangler.jsonc': JSON.stringify({ name: 'yield-head', main: 'src/index.ts' }),
    'src/lib.js': LIB,
    'src/index.ts':
      "import { runAll } from './lib.js';\nexport default { fetch: () => Response.json(runAll()) };\n",
  });
  const out = await cli(['publish'], { cwd: dir });
  assert.is(out.code, 0, out.stdout + out.stderr);
  const appId = await linkedApp(dir);
  const r = await h.call('GET', '/', { host: `${appId}.apps.localhost` });
  assert.is(r.status, 200, r.text);
  const node = await import(`data:text/javascript;base64,${Buffer.from(LIB).toString('base64')}`);
  assert.equal(r.body, JSON.parse(JSON.stringify(node.runAll())));
});

test.after(async () => {
  await live.close();
  await h.close();
});
test.run();
