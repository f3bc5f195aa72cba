/**
 * `npm run bench:start`: how long the platform takes to start, the wait at every command and every
 * restart. Times, on each Node given, in interleaved rounds against a baseline checkout when one is
 * given:
 *   - the `platform` command: `bin.mjs --help` (the start alone) and `bin.mjs apps` against a port
 *     nothing listens on (the start, the config and a failed call), spawn to exit;
 *   - the service as that checkout's `npm start` runs it (its package.json), on an embedded Postgres
 *     of its own already initialised: spawn to "platform is running", then a SIGTERM.
 * Prints the median and the fastest of each, in ms. The first round warms the caches and is not
 * counted.
 *
 *   npm run bench:start -- [--rounds 10] [--node /path/to/node ...] [--baseline /path/to/checkout]
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../src/lib/ports.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    node: { type: 'string', multiple: true },
    baseline: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const nodes = values.node?.length ? values.node : [process.execPath];
const checkouts = [
  { label: 'this', root: path.resolve('.') },
  ...(values.baseline ? [{ label: 'baseline', root: path.resolve(values.baseline) }] : []),
].map((c) => {
  // what that checkout's `npm start` runs: `exec node <args>`
  const script: string = JSON.parse(readFileSync(path.join(c.root, 'package.json'), 'utf8')).scripts
    .start;
  const args = script.replace(/^exec node /, '').split(' ');
  return { ...c, startArgs: args.map((a) => (a.startsWith('src/') ? path.join(c.root, a) : a)) };
});
const downPort = await freePort();
const work = path.resolve('.data', 'bench-runs', `start-${process.pid}`);

function timeCli(node: string, root: string, args: string[]): number {
  const started = performance.now();
  spawnSync(node, [path.join(root, 'src/cli/bin.mjs'), ...args], {
    env: {
      ...process.env,
      PLATFORM_API_URL: `http://127.0.0.1:${downPort}`,
      PLATFORM_API_KEY: 'bench',
      NO_COLOR: '1',
    },
  });
  return performance.now() - started;
}

async function timeService(node: string, root: string, args: string[], dataDir: string) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(node, args, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: '',
      PLATFORM_DATA_DIR: dataDir,
      PORT: String(port),
      PLATFORM_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // taken before anything is awaited: a service that fails to start exits before it would be asked
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const up = await new Promise<boolean>((resolve) => {
    const seen = (d: Buffer) => {
      out += d;
      if (out.includes('platform is running')) resolve(true);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    void exited.then(() => resolve(false));
  });
  const ms = performance.now() - started;
  child.kill('SIGTERM');
  await exited;
  if (!up) throw new Error(`the service did not start:\n${out}`);
  return ms;
}

const versions = new Map(
  nodes.map((n) => [n, spawnSync(n, ['--version'], { encoding: 'utf8' }).stdout.trim()]),
);
type Row = { node: string; checkout: string; what: string; ms: number[] };
const rows = new Map<string, Row>();
const add = (node: string, checkout: string, what: string, ms: number) => {
  const key = `${node} ${checkout} ${what}`;
  const row = rows.get(key) ?? { node, checkout, what, ms: [] };
  row.ms.push(ms);
  rows.set(key, row);
};
try {
  for (let r = -1; r < rounds; r++) {
    for (const node of nodes)
      for (const c of checkouts) {
        const help = timeCli(node, c.root, ['--help']);
        const apps = timeCli(node, c.root, ['apps']);
        const service = await timeService(
          node,
          c.root,
          c.startArgs,
          path.join(work, `${c.label}-${versions.get(node)}`),
        );
        if (r < 0) continue;
        const version = versions.get(node)!;
        add(version, c.label, 'platform --help', help);
        add(version, c.label, 'platform apps (down)', apps);
        add(version, c.label, 'npm start, to running', service);
      }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
console.log(`${rounds} interleaved rounds, ms`);
console.log('node       checkout  what                      median   fastest');
for (const { node, checkout, what, ms } of [...rows.values()].sort(
  (a, b) =>
    a.node.localeCompare(b.node) ||
    a.checkout.localeCompare(b.checkout) ||
    a.what.localeCompare(b.what),
))
  console.log(
    `${node.padEnd(10)} ${checkout.padEnd(9)} ${what.padEnd(24)} ${median(ms).toFixed(0).padStart(7)} ${Math.min(
      ...ms,
    )
      .toFixed(0)
      .padStart(9)}`,
  );
