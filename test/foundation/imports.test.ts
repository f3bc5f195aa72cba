/**
 * The import graph stays a graph: no module imports itself through others (`madge --circular`
 * over src/ and worker/, type-only imports included). A circle is how layers start pointing both
 * ways; the map of the code in the README says which way imports go, and the lower layers' rules
 * are checked here.
 */
import madge from 'madge';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const graph = await madge(['src', 'worker'], {
  fileExtensions: ['ts'],
  tsConfig: 'tsconfig.json',
  detectiveOptions: { ts: { skipTypeImports: false } },
});
const imports = graph.obj();

test('no import circle in src/ or worker/', () => {
  assert.ok(Object.keys(imports).length > 100, 'the graph covers the code');
  assert.equal(graph.circular(), [], 'import circles');
});

/** Modules under `from` that import something outside `allowed`. */
function reachingOut(from: string, allowed: string[]): string[] {
  const out: string[] = [];
  for (const [file, deps] of Object.entries(imports)) {
    if (!file.startsWith(from)) continue;
    for (const d of deps) if (!allowed.some((a) => d.startsWith(a))) out.push(`${file} -> ${d}`);
  }
  return out;
}

test('lower layers never import features', () => {
  assert.ok(
    Object.keys(imports).some((f) => f.startsWith('src/sandbox/')),
    'the sandbox is in the graph',
  );
  assert.equal(reachingOut('src/lib/', ['src/lib/']), [], 'lib/ imports nothing of ours');
  assert.equal(
    reachingOut('src/sandbox/', ['src/sandbox/', 'src/lib/']),
    [],
    'the sandbox knows no platform feature',
  );
  assert.equal(
    reachingOut('src/db/', [
      'src/db/',
      'src/lib/',
      'src/errors.ts',
      'src/config.ts',
      'src/config-env.ts',
      'src/logger.ts',
    ]),
    [],
    'db/ knows no feature',
  );
});

/** Every module `from` reaches through imports (itself excluded), with the chain that reached each. */
function reached(from: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue: [string, string[]][] = [[from, [from]]];
  while (queue.length) {
    const [file, chain] = queue.shift()!;
    for (const d of imports[file] ?? []) {
      if (seen.has(d)) continue;
      seen.set(d, [...chain, d]);
      queue.push([d, [...chain, d]]);
    }
  }
  return seen;
}

test("the node's runtime and the job worker never reach the app origin's request path", () => {
  const roots = Object.keys(imports).filter(
    (f) => f.startsWith('worker/') || f.startsWith('src/runtime/'),
  );
  assert.ok(roots.includes('worker/tasks/app-job.ts'), 'the worker is in the graph');
  assert.ok(roots.includes('src/runtime/node-runtime.ts'), 'the runtime is in the graph');
  const into: string[] = [];
  for (const root of roots)
    for (const [file, chain] of reached(root))
      if (file.startsWith('src/origin/')) into.push(chain.join(' -> '));
  assert.equal(into, [], 'origin/ is the request path: it imports the runtime, never the reverse');
});

test("the guest prelude's parts import only parts before them, so the bundle runs them in index.js's order", async () => {
  const { readFileSync } = await import('node:fs');
  const dir = 'src/sandbox/guest/prelude';
  const order = [
    ...readFileSync(`${dir}/index.js`, 'utf8').matchAll(/^import '\.\/([\w-]+)\.js';/gm),
  ].map((m) => m[1]!);
  assert.ok(order.length > 5, 'index.js lists the parts');
  const late: string[] = [];
  for (const [i, part] of order.entries())
    for (const m of readFileSync(`${dir}/${part}.js`, 'utf8').matchAll(/from '\.\/([\w-]+)\.js'/g))
      if (order.indexOf(m[1]!) < 0 || order.indexOf(m[1]!) >= i)
        late.push(`${part} imports ${m[1]}`);
  assert.equal(late, []);
});

test('no SQL in route tables, the app origin, the sandbox, the HTTP layer, the console or the CLI', async () => {
  const { readFileSync } = await import('node:fs');
  const SQL = /\b(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`/;
  const holders = Object.keys(imports).filter(
    (f) => /(^|\/)routes\.ts$/.test(f) || /^src\/(origin|sandbox|http|console|cli)\//.test(f),
  );
  assert.ok(holders.length > 20, 'the rule covers the route files');
  assert.equal(
    holders.filter((f) => SQL.test(readFileSync(f, 'utf8'))),
    [],
    'SQL belongs in queries.ts (or a service)',
  );
});

test.run();
