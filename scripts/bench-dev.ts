/**
 * `npm run bench:dev`: how long a save takes to become the live release under `platform dev`.
 * Runs the real CLI (`platform dev` with its own local platform and embedded Postgres, in a scratch
 * data directory) on a small TypeScript Hono app, then saves a new version N times and polls the app
 * every 2 ms until it answers the new way. Prints the median, p95 and max from save to served, and
 * what the CLI itself reported per publish (build + upload + activation).
 */
import { spawn } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { median, percentile } from './_lib/stats.ts';

const N = Number(process.argv[2] ?? 20);
const work = path.resolve('.data', 'bench-runs', `dev-${process.pid}`);
const dir = path.join(work, 'app');
await rm(work, { recursive: true, force: true });
await mkdir(path.join(dir, 'src'), { recursive: true });
await mkdir(path.join(dir, 'public'), { recursive: true });
await mkdir(path.join(dir, 'node_modules'), { recursive: true });
await symlink(path.resolve('node_modules/hono'), path.join(dir, 'node_modules/hono'), 'dir');
await writeFile(
  path.join(dir, 'manifest.platform.json'),
  JSON.stringify({
    app: { name: 'bench dev' },
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'src/server.ts' },
  }),
);
await writeFile(path.join(dir, 'public/index.html'), '<h1>bench</h1>');
const source = (n: number) =>
  `import { Hono } from 'hono';\nconst app = new Hono();\napp.get('/v', (c) => c.text('v${n}'));\nexport default app;\n`;
await writeFile(path.join(dir, 'src/server.ts'), source(0));

const child = spawn(
  process.execPath,
  [
    path.resolve('src/cli/bin.mjs'),
    'dev',
    dir,
    '--data-dir',
    path.join(work, 'data'),
    '--port',
    '0',
  ],
  { env: { ...process.env, NO_COLOR: '1' } },
);
let out = '';
child.stdout.on('data', (d) => (out += d));
child.stderr.on('data', (d) => process.stderr.write(d));
const started = Date.now();
let m: RegExpMatchArray | null = null;
while (!(m = out.match(/http:\/\/([a-z0-9]+)\.apps\.localhost:(\d+)/))) {
  if (Date.now() - started > 120_000) throw new Error(`dev did not start:\n${out}`);
  await new Promise((r) => setTimeout(r, 20));
}
const startupMs = Date.now() - started;
const host = `${m[1]}.apps.localhost`;
const port = Number(m[2]);
const get = () =>
  new Promise<string>((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/v', headers: { host } }, (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      res.on('end', () => resolve(t));
    });
    req.on('error', () => resolve(''));
    req.end();
  });

const saveToServed: number[] = [];
for (let i = 1; i <= N; i++) {
  const t0 = performance.now();
  await writeFile(path.join(dir, 'src/server.ts'), source(i));
  while ((await get()) !== `v${i}`) await new Promise((r) => setTimeout(r, 2));
  saveToServed.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 100)); // let the watcher settle between saves
}
const reported = [...out.matchAll(/✔ live\s+rel_\w+\s+(\d+) ms/g)]
  .slice(1)
  .map((x) => Number(x[1]));
child.kill('SIGINT');
await new Promise((r) => child.on('exit', r));
await rm(work, { recursive: true, force: true });

const fmt = (xs: number[]) =>
  `median ${median(xs).toFixed(0)} ms, p95 ${percentile(xs, 95).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
console.log(
  `platform dev, a TypeScript Hono app, ${N} saves (first start of the local platform: ${(startupMs / 1000).toFixed(1)} s)`,
);
console.log(
  `  save → new release served   ${fmt(saveToServed)}   (the watcher's 20 ms wait for a quiet file and 20 ms debounce included)`,
);
console.log(
  `  CLI's own publish time      ${fmt(reported)}   (bundle, secrets, upload, activation)`,
);
