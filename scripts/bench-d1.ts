/**
 * D1 against `wrangler dev`'s runtime: the same Worker (one operation per request: a point read by
 * primary key, an insert, and a request that touches nothing) served by the platform and by
 * Miniflare (the devDependency, what `wrangler dev` runs), both over HTTP on loopback, in
 * interleaved rounds. Prints each operation's p50/p99 request time, what the operation adds to the
 * empty request, point reads per second with 8 requests in flight, and the platform's own cost of a
 * point read on the node holding the database (the statement, no request around it).
 *   npm run bench:d1 [-- --rounds 5 --requests 200]
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Miniflare } from 'miniflare';
import { d1Query } from '../src/sql/d1.ts';
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

const WORKER = `let next = 1000;
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path === '/seed') {
      await env.DB.exec('drop table if exists items; create table items (id integer primary key, name text, price real)');
      const insert = env.DB.prepare('insert into items (id, name, price) values (?, ?, ?)');
      await env.DB.batch(Array.from({ length: 1000 }, (_, i) => insert.bind(i, 'item ' + i, i * 1.5)));
      return new Response('seeded');
    }
    if (path === '/read') {
      const row = await env.DB.prepare('select name, price from items where id = ?').bind(Math.floor(Math.random() * 1000)).first();
      return new Response(row.name);
    }
    if (path === '/insert') {
      await env.DB.prepare('insert into items (name, price) values (?, ?)').bind('new', 2.5).run();
      return new Response('ok');
    }
    return new Response('empty');
  },
};`;
const OPS = ['/empty', '/read', '/insert'];

const env = await startBenchEnv();
await env.server!.runtime.sandbox().warm();
const published = await publishServerApp(env, WORKER, {
  name: 'bench-d1',
  files: [
    { path: 'public/robots.txt', type: 'text/plain', body: '' },
    {
      path: '.platform/bindings.json',
      type: 'application/json',
      body: JSON.stringify({ d1_databases: [{ binding: 'DB', database_name: 'bench' }] }),
    },
  ],
});
const mf = new Miniflare({
  modules: true,
  script: WORKER,
  compatibilityDate: '2024-09-23',
  d1Databases: ['DB'],
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
    let done = 0;
    const end = performance.now() + 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < end) {
          await get(t, '/read');
          done++;
        }
      }),
    );
    (rates.get(t.label) ?? rates.set(t.label, []).get(t.label)!).push(done);
  }
}

// the statement alone on the holder: what a point read costs the node, no request around it
const appId = published.host.split('.')[0]!;
const direct: number[] = [];
for (let i = 0; i < 2000; i++) {
  const start = performance.now();
  await d1Query(
    env.deps,
    appId,
    'bench',
    [{ sql: 'select name, price from items where id = ?', params: [i % 1000] }],
    'first',
  );
  direct.push(performance.now() - start);
}

const ms = (x: number) => x.toFixed(2).padStart(7);
console.log(`${ROUNDS} interleaved rounds of ${N} sequential requests per operation`);
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
  const r = rates.get(t.label)!;
  console.log(
    `${t.label.padEnd(11)} point reads/s with 8 in flight: median ${percentile(r, 50)} (rounds: ${r.join(', ')})`,
  );
}
console.log(
  `platform    a point read on the holder, the statement alone: p50 ${(percentile(direct, 50) * 1000).toFixed(0)} µs, p99 ${(percentile(direct, 99) * 1000).toFixed(0)} µs`,
);
agent.destroy();
await mf.dispose();
await env.close();
process.exit(0);
