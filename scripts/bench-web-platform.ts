/**
 * What the lazily loaded parts of the web platform cost on first use, and after. For each part, a
 * fresh release touches it once per call: the first call in an instance pays for loading the part
 * (evaluated by the platform, not billed to the app's CPU), later calls do not. Prints the median
 * time of a first call and of a warm call, with a release that touches nothing as the baseline,
 * and the app CPU (cpu_ms) the first call was billed.
 *   npm run bench:web-platform [-- --releases 15]
 */
import { DEFAULT_INSTANCE_LIMITS } from '../src/sandbox/protocol.ts';
import { parseArgs } from 'node:util';
import { SandboxPool } from '../src/sandbox/pool.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({ options: { releases: { type: 'string', default: '15' } } });
const RELEASES = Number(values.releases);

const touches: Record<string, string> = {
  'nothing (baseline)': `1`,
  'streams (ReadableStream)': `new ReadableStream()`,
  'Intl (toLocaleString)': `(1234.5).toLocaleString('de-DE')`,
  'crypto.subtle (digest)': `await crypto.subtle.digest('SHA-256', new Uint8Array(8))`,
  'events (AbortController)': `new AbortController()`,
  'FormData (and streams)': `new FormData()`,
  URLPattern: `new URLPattern({ pathname: '/a/:b' })`,
  structuredClone: `structuredClone(new Map([[1, 2]]))`,
};

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
  hardKillMs: 10_000,
});
await pool.warm();

let n = 0;
async function call(
  releaseId: string,
  source: string,
  url: string,
): Promise<{ ms: number; cpuMs: number }> {
  const t0 = performance.now();
  const r = await pool.invoke({
    handler: 'fetch',
    app: { app_id: 'benchapp', origin: 'http://benchapp.apps.localhost', release_id: releaseId },
    release: { releaseId, entry: 'server.js' },
    loadSources: async () => ({ 'server.js': source }),
    request: { method: 'GET', url, headers: [] },
    secrets: {},
  });
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return { ms: performance.now() - t0, cpuMs: r.cpuMs ?? 0 };
}

console.log(`one sandbox worker; per part, ${RELEASES} fresh releases, medians\n`);
console.log(
  'first touch of'.padEnd(28),
  'first call ms'.padStart(14),
  'warm call ms'.padStart(13),
  'billed CPU ms'.padStart(14),
);
for (const [label, expr] of Object.entries(touches)) {
  const firsts: number[] = [];
  const warms: number[] = [];
  const billed: number[] = [];
  const source = `export default { async fetch(r) { if (r.url.endsWith('?touch')) { ${expr}; } return new Response('ok'); } };`;
  for (let i = 0; i < RELEASES; i++) {
    const id = `rel_webbench_${n++}`;
    await call(id, source, 'http://benchapp.apps.localhost/'); // the instance and the module, without touching
    const first = await call(id, source, 'http://benchapp.apps.localhost/?touch');
    firsts.push(first.ms);
    billed.push(first.cpuMs);
    warms.push((await call(id, source, 'http://benchapp.apps.localhost/?touch')).ms);
    pool.evict(id);
    await new Promise((r) => setTimeout(r, 40)); // the worker makes its next blank instance off the clock
  }
  console.log(
    label.padEnd(28),
    median(firsts).toFixed(2).padStart(14),
    median(warms).toFixed(2).padStart(13),
    median(billed).toFixed(2).padStart(14),
  );
}
await pool.close();
