/**
 * `npm run bench:nodes`: how fast a change made through one node is served by another node on the
 * same Postgres (the change feed: triggers NOTIFY from the writing transaction, each node LISTENs).
 * Node A is the real server on a loopback port; node B a second server with its own pool, caches
 * and listener. Each change is made through A's API; B is polled every 2 ms until it answers the
 * new way. Prints the median, p95 and max per kind of change.
 */
import { createDb, createPool } from '../src/db/database.ts';
import type { Deps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { createServer } from '../src/server.ts';
import { createSignals } from '../src/signals.ts';
import { median } from './_lib/stats.ts';
import { startBenchEnv } from './bench-env.ts';

const N = Number(process.argv[2] ?? 20);
const env = await startBenchEnv();
const poolB = createPool(env.deps.config.databaseUrl!, 5);
const depsB: Deps = {
  ...env.deps,
  pool: poolB,
  db: createDb(poolB),
  signals: createSignals(),
  log: createLogger('warn'),
};
const nodeB = createServer(depsB);
const call = (method: string, path: string, body?: unknown) =>
  fetch(`${env.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const bundle = (n: number) => ({
  app: { name: 'nodes' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
  files: [
    { path: 'public/index.html', content_type: 'text/html', content_base64: b64('x') },
    {
      path: 'server.js',
      content_type: 'text/javascript',
      content_base64: b64(
        `export default { fetch(req, ctx) { return new Response('v${n} ' + (ctx.secrets.get('WORD') ?? '-')); } };`,
      ),
    },
  ],
});
const appId = ((await (await call('PUT', '/v0/apps', bundle(0))).json()) as { app_id: string })
  .app_id;
const onB = async () => {
  const res = await nodeB.request(`http://${appId}.apps.localhost/api`);
  return res.text();
};
async function follow(ok: (text: string) => boolean): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (ok(await onB())) return performance.now() - start;
    if (performance.now() - start > 5000) throw new Error('node B did not follow within 5 s');
    await new Promise((r) => setTimeout(r, 2));
  }
}
await onB(); // B has the app cached, as a node serving it would
const publishes: number[] = [];
const secrets: number[] = [];
for (let n = 1; n <= N; n++) {
  const r = await call('PUT', `/v0/apps/${appId}`, bundle(n));
  if (r.status !== 200) throw new Error(`publish ${n}: ${r.status}`);
  publishes.push(await follow((t) => t.startsWith(`v${n} `)));
  await call('PUT', `/v0/apps/${appId}/secrets/WORD`, { value: `w${n}` });
  secrets.push(await follow((t) => t.endsWith(` w${n}`)));
}
const p95 = (xs: number[]) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;
for (const [what, xs] of [
  ['publish (new live release)', publishes],
  ['secret set', secrets],
] as const) {
  console.log(
    `${what.padEnd(28)} node B followed in median ${median(xs).toFixed(1)} ms, p95 ${p95(xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} changes)`,
  );
}
await nodeB.close();
await depsB.db.destroy();
await env.close();
process.exit(0);
