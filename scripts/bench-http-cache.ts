/**
 * The app origin's shared cache against the same page uncached and against bare Hono. An app renders
 * a 100-row HTML table in its server handler (`/page`), and the same page marked
 * `Cache-Control: public, s-maxage=60` (`/cached`); a bare Hono server in another process answers the
 * same bytes from memory. Interleaved rounds of wrk; prints requests/s, p50/p99 and each row's ratio
 * to bare Hono in the same round. The goal: the cached page at 0.9x of bare Hono or better.
 *   npm run bench:http-cache [-- --seconds 3 --rounds 6 --connections 16]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { publishServerApp, startBenchEnv } from './bench-env.ts';
import { hasWrk, load, type LoadResult } from './_lib/load.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '6' },
    // one target alone (bare, page, cached or static), e.g. under --cpu-prof
    only: { type: 'string' },
  },
});
const opts = { seconds: Number(values.seconds), connections: Number(values.connections) };
const ROUNDS = Number(values.rounds);

// what a real handler does per request: build a page of 100 rows (escaping, formatting)
const handler = `const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const rows = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: 'Item <' + (i + 1) + '>', price: (i * 7.31) % 100, tags: ['a', 'b', 'c'].slice(0, i % 4) }));
function page() {
  let out = '<!doctype html><html><head><title>Items</title></head><body><table><thead><tr><th>#</th><th>Name</th><th>Price</th><th>Tags</th></tr></thead><tbody>';
  for (const r of rows) out += '<tr><td>' + r.id + '</td><td>' + esc(r.name) + '</td><td>' + r.price.toFixed(2) + '</td><td>' + r.tags.map(esc).join(', ') + '</td></tr>';
  return out + '</tbody></table></body></html>';
}
export default { fetch(req) {
  const cached = new URL(req.url).pathname === '/cached';
  return new Response(page(), { headers: { 'content-type': 'text/html; charset=utf-8', ...(cached ? { 'cache-control': 'public, s-maxage=60' } : {}) } });
} };`;

const env = await startBenchEnv();
await env.server!.runtime.sandbox().warm();
/** Publishes the handler with `extra` static files: a new app, or a new release of `appId`. */
const publish = (appId?: string, extra: { path: string; text: string }[] = []) =>
  publishServerApp(env, handler, {
    name: 'bench-cache',
    ...(appId ? { appId } : {}),
    files: [
      { path: 'public/index.html', type: 'text/html', body: 'hi' },
      ...extra.map((f) => ({ path: f.path, type: 'text/html; charset=utf-8', body: f.text })),
    ],
  });
const published = await publish();
const host = `${published.app_id}.apps.localhost`;

const get = (path: string) =>
  new Promise<{ text: string; status: string | undefined }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: env.port, path, headers: { host } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ text, status: res.headers['cache-status'] as string }));
      })
      .on('error', reject);
  });
const pageText = (await get('/page')).text;
if ((await get('/cached')).text !== pageText)
  throw new Error('the two paths answer different bytes');

// the same bytes as a static file of the release: the origin's fastest path, for reference
await publish(published.app_id, [{ path: 'public/static.html', text: pageText }]);
if ((await get('/static.html')).text !== pageText) throw new Error('the static file differs');

const bare = spawn(
  process.execPath,
  ['--import', 'tsx', 'scripts/bench-bare-hono.ts', '100', pageText],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
process.on('exit', () => bare.kill());
const barePort = await new Promise<number>((resolve) =>
  bare.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
);

const targets = [
  (s = opts.seconds) =>
    load(
      'bare Hono, the same bytes',
      `http://127.0.0.1:${barePort}/text`,
      {},
      { ...opts, seconds: s },
    ),
  (s = opts.seconds) =>
    load('platform, handler runs', `${env.url}/page`, { host }, { ...opts, seconds: s }),
  (s = opts.seconds) =>
    load('platform, marked cacheable', `${env.url}/cached`, { host }, { ...opts, seconds: s }),
  (s = opts.seconds) =>
    load('platform, a static file', `${env.url}/static.html`, { host }, { ...opts, seconds: s }),
];
const only = ['bare', 'page', 'cached', 'static'].indexOf(values.only ?? '');
if (only >= 0) targets.splice(0, targets.length, targets[only]!);
const rounds: LoadResult[][] = targets.map(() => []);
for (const t of targets) await t(1); // warm-up, not counted
if (only >= 0) {
  const before = process.cpuUsage();
  const r = await targets[0]!();
  const used = process.cpuUsage(before);
  console.log(
    r.label,
    Math.round(r.rps),
    'req/s',
    ((used.user + used.system) / (r.rps * opts.seconds)).toFixed(1),
    'µs CPU/req (this process)',
  );
}
for (let i = 0; i < ROUNDS; i++) {
  const order = targets.map((_, k) => k);
  if (i % 2 === 1) order.reverse();
  for (const k of order) rounds[k]!.push(await targets[k]!());
}
const status = (await get('/cached')).status;
bare.kill();

console.log(
  `\n${opts.connections} connections, ${ROUNDS} interleaved rounds of ${opts.seconds} s, medians; ${(await hasWrk()) ? 'wrk' : 'autocannon'}; page ${pageText.length} bytes; cached answer's Cache-Status: ${status}\n`,
);
console.log(
  'target'.padEnd(30),
  'req/s'.padStart(9),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'x bare'.padStart(7),
  'errors'.padStart(7),
);
for (const [k, rs] of rounds.entries()) {
  const ratio = median(rs.map((r, i) => r.rps / rounds[0]![i]!.rps));
  console.log(
    rs[0]!.label.padEnd(30),
    median(rs.map((r) => r.rps))
      .toFixed(0)
      .padStart(9),
    median(rs.map((r) => r.p50))
      .toFixed(2)
      .padStart(8),
    median(rs.map((r) => r.p99))
      .toFixed(2)
      .padStart(8),
    (k === 0 ? '1.00' : ratio.toFixed(2)).padStart(7),
    String(rs.reduce((n, r) => n + r.errors, 0)).padStart(7),
  );
}
await env.close();
process.exit(0);
