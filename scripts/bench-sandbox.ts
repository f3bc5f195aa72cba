/**
 * The cost of a call into the QuickJS sandbox without HTTP: one sandbox worker, driven directly
 * through the pool as the server fallback drives it, with 32 calls in flight. Prints calls/s and
 * the CPU time per call of this whole process (main thread plus the worker), for a few typical
 * handlers, as the median of several rounds. Use it to judge changes to the guest prelude or to
 * the host/worker protocol; `bench:origin` gives the end-to-end figure.
 *   npm run bench:sandbox [-- --calls 20000 --rounds 5]
 */
import { DEFAULT_INSTANCE_LIMITS } from '../src/sandbox/protocol.ts';
import { parseArgs } from 'node:util';
import { SandboxPool } from '../src/sandbox/pool.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 32;

const handlers: Record<string, string> = {
  'text with a header': `export default { fetch() { return new Response('hello', { headers: { 'content-type': 'text/plain' } }); } };`,
  'Response.json': `export default { fetch(req) { return Response.json({ ok: true, method: req.method }); } };`,
  'reads url and headers': `export default { fetch(req) { const u = new URL(req.url); return new Response(u.pathname + ' ' + req.headers.get('accept'), { status: 200, headers: { 'content-type': 'text/plain', 'cache-control': 'no-store' } }); } };`,
};

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
  hardKillMs: 10_000,
});
await pool.warm();

console.log(
  `one sandbox worker, ${IN_FLIGHT} calls in flight, ${ROUNDS} rounds of ${CALLS} calls, medians\n`,
);
console.log('handler'.padEnd(26), 'calls/s'.padStart(9), 'CPU µs/call'.padStart(12));
let n = 0;
for (const [label, source] of Object.entries(handlers)) {
  const releaseId = `rel_bench_${n++}`;
  const call = async (): Promise<void> => {
    const r = await pool.invoke({
      handler: 'fetch',
      app: { app_id: 'benchapp', origin: 'http://benchapp.apps.localhost', release_id: releaseId },
      release: { releaseId, entry: 'server.js' },
      loadSources: async () => ({ 'server.js': source }),
      request: {
        method: 'GET',
        url: 'http://benchapp.apps.localhost/api/x?y=1',
        headers: [
          ['accept', 'text/html'],
          ['user-agent', 'bench'],
        ],
      },
      secrets: {},
    });
    if (!r.ok || r.response?.status !== 200)
      throw new Error(`${label}: ${JSON.stringify(r.error ?? r.response)}`);
  };
  const round = async (count: number): Promise<{ rate: number; cpuUs: number }> => {
    let left = count;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (left-- > 0) await call();
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { rate: count / seconds, cpuUs: (cpu.user + cpu.system) / count };
  };
  await round(Math.min(CALLS, 5000)); // warm-up: module load and JIT
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(CALLS));
  console.log(
    label.padEnd(26),
    median(rounds.map((r) => r.rate))
      .toFixed(0)
      .padStart(9),
    median(rounds.map((r) => r.cpuUs))
      .toFixed(1)
      .padStart(12),
  );
}
await pool.close();
