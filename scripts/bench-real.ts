/**
 * Real handlers (test/fixtures/real-handlers/) on the platform (on its default engine, the own
 * QuickJS build, and on a second node of the same service running the stock variant), under workerd
 * and under Node + Hono, and in a bare QuickJS loop on each engine, each runtime on one core (this
 * process and its children on core 1, wrk on core 0). For each handler: one esbuild bundle, the
 * same answer from all four servers checked
 * byte for byte, then interleaved rounds of wrk; requests/s and CPU per request (the platform's whole
 * process; workerd's and Node's from /proc). The bare loop calls the same bundle's fetch N times
 * inside one sandbox call (the sandbox's QuickJS and prelude, no HTTP and no host/worker traffic):
 * what the engine allows with zero platform cost.
 *   npm run bench:real [-- --seconds 3 --rounds 3 --connections 16 --only marked]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleHandler, HANDLERS, type RealHandler } from '../test/_lib/real-handlers.ts';
import { SandboxPool } from '../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../src/sandbox/protocol.ts';
import { load, type LoadOptions } from './_lib/load.ts';
import { ownCpuMs, pinTo, processCpuMs, settle } from './_lib/proc-cpu.ts';
import { median } from './_lib/stats.ts';
import { startWorkerd } from './_lib/workerd.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    // handlers whose file name contains this
    only: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const pinned = pinTo(1);
const base: LoadOptions = {
  seconds: Number(values.seconds),
  connections: Number(values.connections),
  ...(pinned ? { cpu: 0 } : {}),
};

const { startBenchEnv, startSiblingServer, publishServerApp } = await import('./bench-env.ts');
const env = await startBenchEnv();
// the same service on the stock QuickJS variant: a second node on the same database
const stock = await startSiblingServer(env, { engine: 'stock' });
await env.server!.runtime.sandbox().warm();
await stock.server.runtime.sandbox().warm();
const engineName = env.server!.runtime.sandbox().engine.name;
const work = await mkdtemp(path.join(tmpdir(), 'bench-real-'));

type Target = { label: string; url: string; headers: Record<string, string>; cpu: () => number };
type Row = { handler: string; rps: number[][]; cpuUs: number[][]; loopUs: number[][] };

async function startNode(bundleFile: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'scripts/_lib/serve-bundle.ts', bundleFile],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const kill = () => child.kill();
  process.on('exit', kill);
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
  );
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: kill };
}

/** Status, content type and body, through node:http (fetch would not send a `host` header). */
const answer = (h: RealHandler, url: string, headers: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    const req = http.request(
      url + h.path,
      {
        method: h.method,
        headers: { ...headers, ...(h.contentType ? { 'content-type': h.contentType } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(`${res.statusCode} ${res.headers['content-type']}\n${text}`));
      },
    );
    req.on('error', reject);
    req.end(h.body);
  });

/** CPU µs per iteration of `fetch` called in a loop inside one sandbox call. */
async function bareLoop(
  pool: SandboxPool,
  h: RealHandler,
  source: string,
  n: number,
): Promise<number> {
  const spec = JSON.stringify({
    method: h.method,
    path: h.path,
    body: h.body,
    type: h.contentType,
  });
  const loop = `import app from './server.js';
const spec = ${spec};
export default { async fetch(request, env, ctx) {
  const n = Number(new URL(request.url).searchParams.get('n'));
  for (let i = 0; i < n; i++) {
    const init = { method: spec.method, headers: spec.type ? { 'content-type': spec.type } : {} };
    if (spec.body) init.body = spec.body;
    const res = await app.fetch(new Request('http://bench.apps.localhost' + spec.path, init), env, ctx);
    await res.text();
  }
  return new Response(String(n));
} };`;
  const r = await pool.invoke({
    handler: 'fetch',
    app: { app_id: 'benchloop', origin: 'http://bench.apps.localhost', release_id: h.file },
    release: { releaseId: `loop_${h.file}`, entry: 'loop.js' },
    loadSources: async () => ({ 'loop.js': loop, 'server.js': source }),
    request: { method: 'GET', url: `http://bench.apps.localhost/?n=${n}`, headers: [] },
    secrets: {},
  });
  if (!r.ok || r.cpuMs === undefined) throw new Error(`bare loop failed: ${JSON.stringify(r)}`);
  return (r.cpuMs * 1000) / n;
}
const loopPoolOf = async (engine: 'own' | 'stock') => {
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 60_000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 120_000 },
    hardKillMs: 120_000,
    engine,
  });
  await pool.warm();
  return pool;
};
const loopPool = await loopPoolOf(engineName);
const stockLoopPool = await loopPoolOf('stock');

const rows: Row[] = [];
for (const h of HANDLERS.filter((x) => !values.only || x.file.includes(values.only))) {
  const source = await bundleHandler(h);
  const file = path.join(work, `${h.file}.mjs`);
  await writeFile(file, source);
  const { host } = await publishServerApp(env, source, { name: 'bench-real' });
  const workerd = await startWorkerd(source, { probe: h.method === 'GET' ? h.path : '/' });
  if (!workerd) throw new Error('workerd does not run here');
  const node = await startNode(file);
  const targets: Target[] = [
    { label: 'platform', url: env.url, headers: { host }, cpu: ownCpuMs },
    { label: 'stock', url: stock.url, headers: { host }, cpu: ownCpuMs },
    { label: 'workerd', url: workerd.url, headers: {}, cpu: () => processCpuMs(workerd.pid) },
    { label: 'node', url: node.url, headers: {}, cpu: () => processCpuMs(node.pid) },
  ];
  const answers = await Promise.all(targets.map((t) => answer(h, t.url, t.headers)));
  const nodeAnswer = answers[targets.findIndex((t) => t.label === 'node')]!;
  for (const [i, a] of answers.entries())
    if (a !== nodeAnswer)
      throw new Error(
        `${h.name}: ${targets[i]!.label} answers differently from Node:\n${a.slice(0, 300)}\n---\n${nodeAnswer.slice(0, 300)}`,
      );
  if (!answers[0]!.startsWith('200 ')) throw new Error(`${h.name}: ${answers[0]!.slice(0, 300)}`);

  const options: LoadOptions = {
    ...base,
    ...(h.body ? { post: { body: h.body, contentType: h.contentType! } } : {}),
  };
  const run = async (t: Target, seconds = base.seconds) => {
    await settle();
    const before = t.cpu();
    const r = await load(t.label, t.url + h.path, t.headers, { ...options, seconds });
    if (r.errors) console.warn(`${h.name} on ${t.label}: ${r.errors} errors of ${r.requests}`);
    return { rps: r.rps, cpuUs: ((t.cpu() - before) * 1000) / r.requests };
  };
  for (const t of targets) await run(t, 1); // warm-up, not counted
  const row: Row = {
    handler: h.name,
    rps: targets.map(() => []),
    cpuUs: targets.map(() => []),
    loopUs: [[], []],
  };
  // the loop's length: about a second of CPU
  const per = await bareLoop(loopPool, h, source, 20);
  const n = Math.max(20, Math.round(1_000_000 / per));
  for (let round = 0; round < ROUNDS; round++) {
    const order = targets.map((_, k) => k);
    if (round % 2) order.reverse();
    for (const k of order) {
      const r = await run(targets[k]!);
      row.rps[k]!.push(r.rps);
      row.cpuUs[k]!.push(r.cpuUs);
    }
    row.loopUs[0]!.push(await bareLoop(loopPool, h, source, n));
    row.loopUs[1]!.push(await bareLoop(stockLoopPool, h, source, n));
  }
  rows.push(row);
  await workerd.stop();
  node.stop();
  process.stdout.write('.');
}
await loopPool.close();
await stockLoopPool.close();
await stock.close();
await env.close();
await rm(work, { recursive: true, force: true });

const f = (x: number, d = 0) => x.toFixed(d);
const ratio = (xs: number[], ys: number[]) => median(xs.map((x, i) => x / ys[i]!));
console.log(
  `\n\n${pinned ? 'each runtime on core 1, wrk on core 0' : 'not pinned (no taskset)'}; ${base.connections} connections; ${ROUNDS} interleaved rounds of ${base.seconds} s; medians. CPU per request in µs.\n`,
);
// targets: 0 the platform (its default engine), 1 the platform on the stock variant, 2 workerd, 3 node
const head = [
  'handler',
  `${engineName}/s`,
  'stock/s',
  'workerd/s',
  'node/s',
  `${engineName}÷wd`,
  'stock÷wd',
  `cpu ${engineName}`,
  'cpu stock',
  'cpu wd',
  'cpu node',
  `loop ${engineName}`,
  'loop stock',
  `cpu ${engineName}÷wd`,
  `cpu ${engineName}÷loop`,
];
const table = rows.map((r) => [
  r.handler,
  ...[0, 1, 2, 3].map((k) => f(median(r.rps[k]!))),
  f(ratio(r.rps[0]!, r.rps[2]!), 3),
  f(ratio(r.rps[1]!, r.rps[2]!), 3),
  ...[0, 1, 2, 3].map((k) => f(median(r.cpuUs[k]!))),
  f(median(r.loopUs[0]!)),
  f(median(r.loopUs[1]!)),
  f(ratio(r.cpuUs[0]!, r.cpuUs[2]!), 1),
  f(median(r.cpuUs[0]!) / median(r.loopUs[0]!), 2),
]);
const geo = (xs: number[]) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
table.push([
  'geometric mean',
  ...['', '', '', ''],
  f(geo(rows.map((r) => ratio(r.rps[0]!, r.rps[2]!))), 3),
  f(geo(rows.map((r) => ratio(r.rps[1]!, r.rps[2]!))), 3),
  ...['', '', '', '', '', ''],
  f(geo(rows.map((r) => ratio(r.cpuUs[0]!, r.cpuUs[2]!))), 1),
  f(geo(rows.map((r) => median(r.cpuUs[0]!) / median(r.loopUs[0]!))), 2),
]);
const widths = head.map((c, i) => Math.max(c.length, ...table.map((r) => r[i]!.length)));
for (const r of [head, ...table])
  console.log(r.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  '));
process.exit(0);
