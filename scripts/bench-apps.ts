/**
 * `npm run bench:apps [-- N]`: the long tail. Publishes N apps (default 1,000), each with its own
 * small server handler, then requests every app once in a cold pass and again in a warm pass, over
 * real HTTP. Prints latency percentiles per pass and the process's memory after each (RSS, and the
 * sandbox workers' WebAssembly heaps, which RSS includes), and the CPU each request cost this process
 * and Postgres. Goals (issue #21): warm p50 < 1 ms and
 * p99 < 5 ms, cold p50 < 5 ms, with 1,000 apps in rotation on one node. A last pass requests 200
 * other apps once each, 25 ms apart: cold starts on a node that is not saturated by them.
 */
import http from 'node:http';
import { percentile } from './_lib/stats.ts';
import { startBenchEnv } from './bench-env.ts';
import { hostRequester } from './_lib/host-request.ts';

const N = Number(process.argv[2] ?? 1000);
const env = await startBenchEnv();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = hostRequester(env.port, env.apiKey, agent);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const server = (i: number) => `const routes = { '/': () => Response.json({ app: ${i}, ok: true }) };
export default { fetch(req) { const h = routes[new URL(req.url).pathname]; return h ? h() : new Response('not found', { status: 404 }); } };`;

/** Apps for the spaced cold pass: cold starts that arrive with idle time between them, as the long tail's do. */
const SPACED = Math.min(200, N);
const SPACED_GAP_MS = 25;
const hosts: string[] = [];
const publishStart = performance.now();
for (let i = 0; i < N + SPACED; i++) {
  const body = JSON.stringify({
    app: { name: `tail ${i}` },
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      {
        path: 'public/robots.txt',
        content_type: 'text/plain',
        content_base64: b64('User-agent: *'),
      },
      { path: 'server.js', content_type: 'text/javascript', content_base64: b64(server(i)) },
    ],
  });
  const r = await request('PUT', '/v0/apps', 'api.localhost', body);
  if (r.status !== 200) throw new Error(`publish ${i}: ${r.status} ${r.text}`);
  hosts.push(`${JSON.parse(r.text).app_id}.apps.localhost`);
}
const publishS = (performance.now() - publishStart) / 1000;

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;

/**
 * CPU ms used so far by this process (the server, its sandbox workers and this client) and by the
 * database's processes when they run on this machine (their pids from pg_stat_activity, read in
 * /proc; undefined elsewhere). On 2 cores a run of cold starts is CPU-bound: this says by how much.
 */
async function cpuMs(): Promise<{ node: number; db: number | undefined }> {
  const u = process.cpuUsage();
  let db: number | undefined;
  try {
    const { rows } = await env.deps.pool.query<{ pid: number }>('select pid from pg_stat_activity');
    const { readFile } = await import('node:fs/promises');
    db = 0;
    for (const { pid } of rows) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      db += (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in 10 ms ticks
    }
  } catch {
    db = undefined;
  }
  return { node: (u.user + u.system) / 1000, db };
}

async function pass(label: string, over = hosts.slice(0, N), gapMs = 0): Promise<void> {
  const times: number[] = [];
  const cpu0 = await cpuMs();
  for (const host of over) {
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    const t0 = performance.now();
    const r = await request('GET', '/', host);
    times.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${host}: ${r.status} ${r.text}`);
  }
  const cpu1 = await cpuMs();
  const m = process.memoryUsage();
  const p = (q: number) => percentile(times, q).toFixed(2);
  const perRequest = (a: number, b: number) => ((b - a) / over.length).toFixed(2);
  const cpu = `CPU/request ${perRequest(cpu0.node, cpu1.node)} ms${cpu0.db !== undefined && cpu1.db !== undefined ? ` + Postgres ${perRequest(cpu0.db, cpu1.db)} ms` : ''}`;
  console.log(
    `${label.padEnd(12)} p50 ${p(50).padStart(6)} ms  p90 ${p(90).padStart(6)} ms  p99 ${p(99).padStart(6)} ms  max ${Math.max(
      ...times,
    )
      .toFixed(1)
      .padStart(
        6,
      )} ms   ${cpu}   RSS ${mib(m.rss)}, heap ${mib(m.heapUsed)}, external ${mib(m.external)}`,
  );
}

console.log(
  `${N} apps with server code (and ${SPACED} more for the spaced pass), published in ${publishS.toFixed(1)} s; one request each per pass, sequential, keep-alive`,
);
await pass('cold pass');
await pass('warm pass');
await pass('warm again');
// Back to back, every cold start competes for the cores with the next spare instance being compiled;
// here each arrives after 25 ms of quiet, as requests to rarely used apps do.
await pass(`cold, ${SPACED_GAP_MS} ms apart`.padEnd(12), hosts.slice(N), SPACED_GAP_MS);
agent.destroy();
await env.close();
process.exit(0);
