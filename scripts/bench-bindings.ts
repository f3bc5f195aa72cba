/**
 * Bindings against `wrangler dev`'s runtime: the same Worker (one operation per request: a KV get or
 * put, an R2 get or put of 1 KiB, and a request that touches nothing) served by the platform and by
 * Miniflare (the devDependency, what `wrangler dev` runs), both over HTTP on loopback, in
 * interleaved rounds. Prints each operation's p50/p99 request time, what the operation adds to the
 * empty request, KV gets per second with 8 requests in flight, and an 8 MiB R2 object streamed
 * out as a response body (read in chunks here: never whole in the sandbox), in MiB/s.
 *   npm run bench:bindings [-- --rounds 5 --requests 200]
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Miniflare } from 'miniflare';
import { percentile } from './_lib/stats.ts';
import { publishServerApp, startBenchEnv } from './bench-env.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '200' },
  },
});
const ROUNDS = Number(values.rounds);
const N = Number(values.requests);

const WORKER = `const value = 'v'.repeat(1024);
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path === '/seed') { await env.KV.put('hot', value); await env.R2.put('hot', value); await env.R2.put('big', new Uint8Array(8 * 1024 * 1024)); return new Response('seeded'); }
    if (path === '/r2-get-8m') return new Response((await env.R2.get('big')).body);
    if (path === '/kv-get') return new Response((await env.KV.get('hot')).length + '');
    if (path === '/kv-put') { await env.KV.put('cold', value); return new Response('ok'); }
    if (path === '/r2-get') return new Response((await (await env.R2.get('hot')).text()).length + '');
    if (path === '/r2-put') { await env.R2.put('cold', value); return new Response('ok'); }
    return new Response('empty');
  },
};`;
const OPS = ['/empty', '/kv-get', '/kv-put', '/r2-get', '/r2-put'];

const env = await startBenchEnv();
await env.server!.runtime.sandbox().warm();
const published = await publishServerApp(env, WORKER, {
  name: 'bench-bindings',
  files: [
    { path: 'public/robots.txt', type: 'text/plain', body: '' },
    {
      path: '.platform/bindings.json',
      type: 'application/json',
      body: JSON.stringify({
        kv_namespaces: [{ binding: 'KV' }],
        r2_buckets: [{ binding: 'R2', bucket_name: 'bench' }],
      }),
    },
  ],
});
const mf = new Miniflare({
  modules: true,
  script: WORKER,
  compatibilityDate: '2024-09-23',
  kvNamespaces: ['KV'],
  r2Buckets: ['R2'],
  host: '127.0.0.1',
  port: 0,
});
const mfUrl = new URL(String(await mf.ready));

type Target = { label: string; port: number; host: string };
const targets: Target[] = [
  { label: 'platform', port: env.port, host: published.host },
  { label: 'miniflare', port: Number(mfUrl.port), host: mfUrl.host },
];
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

const get = (t: Target, path: string) =>
  new Promise<string>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: t.port, path, headers: { host: t.host }, agent }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(text)
            : reject(new Error(`${path}: ${res.statusCode} ${text}`)),
        );
      })
      .on('error', reject);
  });

for (const t of targets) {
  if ((await get(t, '/seed')) !== 'seeded') throw new Error(`${t.label} did not seed`);
  for (const op of OPS) for (let i = 0; i < 20; i++) await get(t, op); // warm-up, not counted
}

const BIG = '/r2-get-8m';
for (const t of targets) for (let i = 0; i < 3; i++) await get(t, BIG);

const times = new Map<string, number[]>();
const rates = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const t of round % 2 ? [...targets].reverse() : targets) {
    for (const op of OPS) {
      const key = `${t.label} ${op}`;
      const list = times.get(key) ?? [];
      for (let i = 0; i < N; i++) {
        const start = performance.now();
        await get(t, op);
        list.push(performance.now() - start);
      }
      times.set(key, list);
    }
    const big = times.get(`${t.label} ${BIG}`) ?? [];
    for (let i = 0; i < Math.max(5, N / 20); i++) {
      const start = performance.now();
      if ((await get(t, BIG)).length !== 8 * 1024 * 1024) throw new Error(`${t.label}: short body`);
      big.push(performance.now() - start);
    }
    times.set(`${t.label} ${BIG}`, big);
    // KV gets with 8 in flight for one second
    let done = 0;
    const end = performance.now() + 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < end) {
          await get(t, '/kv-get');
          done++;
        }
      }),
    );
    (rates.get(t.label) ?? rates.set(t.label, []).get(t.label)!).push(done);
  }
}

const ms = (x: number) => x.toFixed(2).padStart(7);
console.log(`${ROUNDS} interleaved rounds of ${N} sequential requests per operation, 1 KiB values`);
console.log('target      operation   p50 ms  p99 ms  op adds (p50 over /empty)');
for (const t of targets) {
  const empty = percentile(times.get(`${t.label} /empty`)!, 50);
  for (const op of OPS) {
    const list = times.get(`${t.label} ${op}`)!;
    const p50 = percentile(list, 50);
    console.log(
      `${t.label.padEnd(11)} ${op.padEnd(10)} ${ms(p50)} ${ms(percentile(list, 99))} ${op === '/empty' ? '' : ms(p50 - empty)}`,
    );
  }
}
for (const t of targets) {
  const p50 = percentile(times.get(`${t.label} ${BIG}`)!, 50);
  console.log(
    `${t.label.padEnd(11)} 8 MiB R2 object as a response body: p50 ${p50.toFixed(1)} ms, ${(8000 / p50).toFixed(0)} MiB/s`,
  );
}
for (const t of targets) {
  const r = rates.get(t.label)!;
  console.log(
    `${t.label.padEnd(11)} KV gets/s with 8 in flight: median ${percentile(r, 50)} (rounds: ${r.join(', ')})`,
  );
}
agent.destroy();
await mf.dispose();
await env.close();
