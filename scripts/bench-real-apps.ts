/**
 * The real-apps corpus (create-cloudflare's templates, test/_lib/real-apps.ts) on the platform and
 * under workerd, one app at a time: each published by the real CLI, then its first probe's first
 * request after publish (after workerd's start for the control), and the warm latency of that
 * request, median of interleaved rounds (the platform, then workerd, ROUNDS times).
 *   npm run bench:real-apps [-- --rounds 5 --requests 50]
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleForWorkerd, CORPUS, materialise } from '../test/_lib/real-apps.ts';
import { linkPackages } from '../test/_lib/cli.ts';
import { startBenchEnv } from './bench-env.ts';
import { hostRequester } from './_lib/host-request.ts';
import { median } from './_lib/stats.ts';
import { startWorkerd } from './_lib/workerd.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '50' },
  },
});
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);

const env = await startBenchEnv();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = hostRequester(env.port, env.apiKey, agent);
const work = path.resolve('.data', 'bench-real-apps');

const publish = (dir: string) =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.resolve('src/cli/bin.mjs'), 'publish'], {
      cwd: dir,
      env: {
        ...process.env,
        PLATFORM_API_URL: env.url,
        PLATFORM_API_KEY: env.apiKey,
        NO_COLOR: '1',
      },
      stdio: 'ignore',
    });
    child.on('close', (code) => resolve(code ?? -1));
  });

const timed = async (fn: () => Promise<unknown>) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const getVia = (url: string) => () =>
  new Promise<void>((resolve, reject) =>
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      })
      .on('error', reject),
  );

const rows: string[][] = [];
for (const app of CORPUS) {
  if (!app.entry) continue;
  const probe = app.probes.find((p) => (p.method ?? 'GET') === 'GET')!;
  const dir = await materialise(app, path.join(work, app.name));
  await linkPackages(dir, app.packages);
  if ((await publish(dir)) !== 0) {
    rows.push([app.name, 'publish failed', '', '', '']);
    continue;
  }
  const appId = JSON.parse(await readFile(path.join(dir, '.platform', 'app.json'), 'utf8')).app_id;
  const host = `${appId}.apps.localhost`;
  const mineFirst = await timed(() => request('GET', probe.path, host));
  const workerdStarted = process.hrtime.bigint();
  const w = await startWorkerd(await bundleForWorkerd(dir, app.entry), { probe: probe.path });
  if (!w) throw new Error('workerd does not run here');
  // workerd's first answer is part of its start-up probe: its time from start is the fair control
  const theirsFirst = Number(process.hrtime.bigint() - workerdStarted) / 1e6;
  const mine: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < REQUESTS; i++)
      mine.push(await timed(() => request('GET', probe.path, host)));
    for (let i = 0; i < REQUESTS; i++) theirs.push(await timed(getVia(`${w.url}${probe.path}`)));
  }
  await w.stop();
  rows.push([
    `${app.name} ${probe.path}`,
    mineFirst.toFixed(1),
    theirsFirst.toFixed(1),
    median(mine).toFixed(3),
    median(theirs).toFixed(3),
  ]);
}
await env.close();
agent.destroy();

const head = [
  'app, request',
  'first (ms)',
  'workerd start+first',
  'warm p50 (ms)',
  'workerd warm p50',
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
