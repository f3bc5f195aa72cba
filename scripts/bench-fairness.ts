/**
 * CPU fairness between apps on one sandbox worker, driven through the pool as the server fallback
 * drives it. A light app's calls (one at a time, as a visitor's page loads) are timed alone, then
 * beside a CPU-heavy neighbour that keeps N calls of ~45 ms CPU each in flight. Prints the light
 * app's p50/p99 latency in each case and how many of the neighbour's calls were served or refused.
 *   npm run bench:fairness [-- --seconds 5 --neighbour 64]
 */
import { DEFAULT_INSTANCE_LIMITS } from '../src/sandbox/protocol.ts';
import { parseArgs } from 'node:util';
import { SandboxPool } from '../src/sandbox/pool.ts';
import { percentile } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    neighbour: { type: 'string', default: '64' },
  },
});
const SECONDS = Number(values.seconds);
const NEIGHBOUR = Number(values.neighbour);

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
  hardKillMs: 10_000,
});
await pool.warm();

const call = (releaseId: string, source: string) =>
  pool.invoke({
    handler: 'fetch',
    app: { app_id: releaseId, origin: `http://${releaseId}.apps.localhost`, release_id: releaseId },
    release: { releaseId, entry: 'server.js' },
    loadSources: async () => ({ 'server.js': source }),
    request: { method: 'GET', url: `http://${releaseId}.apps.localhost/`, headers: [] },
    secrets: {},
  });
const LIGHT = `export default { fetch() { return new Response('light'); } };`;
const HEAVY = `export default { fetch() { const end = Date.now() + 45; let n = 0; while (Date.now() < end) n++; return new Response('heavy ' + n); } };`;

async function light(seconds: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const r = await call('rel_light', LIGHT);
    if (!r.ok) throw new Error(`light call failed: ${JSON.stringify(r.error)}`);
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  return times;
}

const row = (label: string, t: number[], extra = '') =>
  console.log(
    label.padEnd(34),
    percentile(t, 50).toFixed(1).padStart(8),
    percentile(t, 99).toFixed(1).padStart(8),
    String(t.length).padStart(7),
    extra,
  );

await light(1); // warm-up
console.log(
  `one sandbox worker; light app: one call at a time for ${SECONDS} s; neighbour: ${NEIGHBOUR} calls of ~45 ms CPU kept in flight\n`,
);
console.log(
  'light app'.padEnd(34),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'calls'.padStart(7),
);
row('alone', await light(SECONDS));

let going = true;
let served = 0;
let refused = 0;
const neighbour = Promise.all(
  Array.from({ length: NEIGHBOUR }, async () => {
    while (going) {
      const r = await call('rel_heavy', HEAVY);
      if (r.ok) served++;
      else if (r.error?.kind === 'overloaded')
        refused++, await new Promise((res) => setTimeout(res, 50));
      else throw new Error(`heavy call failed: ${JSON.stringify(r.error)}`);
    }
  }),
);
await new Promise((r) => setTimeout(r, 500));
served = 0;
refused = 0;
const beside = await light(SECONDS);
going = false;
row(
  'beside the CPU-heavy neighbour',
  beside,
  `(neighbour: ${(served / SECONDS).toFixed(1)} calls/s served, ${refused} refused)`,
);
await neighbour;
await pool.close();
