/**
 * `npm run bench:cli-start`: how long the `platform` command takes to start and answer, the wait a
 * person has at every command. Runs `bin.mjs --help` (nothing but the start) and `bin.mjs apps`
 * against a port nothing listens on (the start, the config and the failed call), on each Node given,
 * in interleaved rounds against a baseline checkout when one is given. Prints the median and the
 * fastest of each, in ms.
 *
 *   npm run bench:cli-start -- [--rounds 15] [--node /path/to/node ...] [--baseline /path/to/checkout]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../src/lib/ports.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    node: { type: 'string', multiple: true },
    baseline: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const nodes = values.node?.length ? values.node : [process.execPath];
const checkouts = [
  { label: 'this', bin: path.resolve('src/cli/bin.mjs') },
  ...(values.baseline
    ? [{ label: 'baseline', bin: path.resolve(values.baseline, 'src/cli/bin.mjs') }]
    : []),
];
const port = await freePort();
const commands = [
  { label: '--help', args: ['--help'] },
  { label: 'apps (server down)', args: ['apps'] },
];

const versionOf = (node: string) =>
  spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
const runs = new Map<string, number[]>();
const versions = new Map(nodes.map((n) => [n, versionOf(n)]));

for (let r = -1; r < rounds; r++) {
  // round -1 warms the caches (tsx's, Node's compile cache) and is not counted
  for (const node of nodes)
    for (const cmd of commands)
      for (const c of checkouts) {
        const started = performance.now();
        spawnSync(node, [c.bin, ...cmd.args], {
          encoding: 'utf8',
          env: {
            ...process.env,
            PLATFORM_API_URL: `http://127.0.0.1:${port}`,
            PLATFORM_API_KEY: 'bench',
            NO_COLOR: '1',
          },
        });
        const ms = performance.now() - started;
        if (r < 0) continue;
        const key = `${versions.get(node)}  ${c.label}  ${cmd.label}`;
        runs.set(key, [...(runs.get(key) ?? []), ms]);
      }
}
console.log(`${rounds} interleaved rounds; ms from spawn to exit`);
console.log('node       checkout  command                median   fastest');
for (const [key, ms] of runs) {
  const [node, checkout, cmd] = key.split('  ');
  console.log(
    `${node!.padEnd(10)} ${checkout!.padEnd(9)} ${cmd!.padEnd(22)} ${median(ms).toFixed(0).padStart(6)} ${Math.min(
      ...ms,
    )
      .toFixed(0)
      .padStart(9)}`,
  );
}
