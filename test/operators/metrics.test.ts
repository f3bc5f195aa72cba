/**
 * `/metrics`: scraped with the operator's token or an operator's API key (anyone else is refused),
 * parsed by a Prometheus text-format parser, and its figures follow what the service did: app
 * requests by status, latency, sandbox calls and CPU, outbound fetches, jobs, the Postgres pool.
 * No label names an app or an account.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import parsePrometheus from 'parse-prometheus-text-format';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';
const upstream: HttpServer = createServer((_req, res) => res.end('pong'));
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const h = await createHarness({ PLATFORM_METRICS_TOKEN: TOKEN, PLATFORM_FETCH_ALLOW: '127.0.0.1' });
const operator = await newUser(h, 'operator'); // the first user of this fresh database
const someone = await newUser(h, 'someone');

type Family = {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; count?: string; sum?: string }[];
};

async function scrape(key = TOKEN): Promise<{ text: string; families: Map<string, Family> }> {
  const r = await h.call('GET', '/metrics', { key });
  assert.is(r.status, 200, r.text);
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  // Prometheus's own parser and linter (Debian's prometheus package; .ci/run installs it)
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8' });
  if (checked.error)
    throw new Error(`promtool is needed: apt-get install prometheus (${checked.error.message})`);
  const said = `${checked.stdout}${checked.stderr}`;
  assert.not.match(said, /parsing error/, said);
  // lint: every family of ours passes; prom-client's nodejs_* gauges named *_total are its own
  const problems = said.split('\n').filter((l) => l.trim() && !l.startsWith('nodejs_'));
  assert.equal(problems, [], said);
  const families = new Map<string, Family>();
  for (const f of parsePrometheus(r.text) as Family[]) families.set(f.name, f);
  return { text: r.text, families };
}

function value(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const f = families.get(name);
  if (!f) return 0;
  const m = f.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m ? Number(m.value ?? m.count) : 0;
}

test('only the token and operators may scrape', async () => {
  const none = await h.call('GET', '/metrics', { key: null });
  assert.is(none.status, 401);
  assert.is(none.body.error.code, 'unauthorized');
  const wrong = await h.call('GET', '/metrics', {
    headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
    key: null,
  });
  assert.is(wrong.status, 401);
  const user = await h.call('GET', '/metrics', { key: someone.api_key });
  assert.is(user.status, 403);
  assert.is(user.body.error.code, 'forbidden');
  await scrape(TOKEN);
  await scrape(operator.api_key);
});

test('the figures follow what the service did', async () => {
  const app = await publishServerApp(
    h,
    someone.api_key,
    `export default { async fetch(request) {
      const u = new URL(request.url);
      if (u.pathname === '/fetch') return new Response(await (await fetch('${upstreamUrl}/')).text());
      if (u.pathname === '/refused') { try { await fetch('http://127.0.0.2:9/'); } catch (e) { return new Response('refused'); } }
      if (u.pathname === '/missing') return new Response('nope', { status: 404 });
      return new Response('hello');
    } };`,
  );
  const before = await scrape();
  for (let i = 0; i < 5; i++)
    assert.is((await h.call('GET', '/run', { host: app.host })).status, 200);
  assert.is((await h.call('GET', '/missing', { host: app.host })).status, 404);
  assert.is((await h.call('GET', '/fetch', { host: app.host })).text, 'pong');
  assert.is((await h.call('GET', '/refused', { host: app.host })).text, 'refused');
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string> = {}) =>
    value(after.families, name, labels) - value(before.families, name, labels);

  assert.is(delta('platform_http_requests_total', { host_kind: 'app', status: '200' }), 7);
  assert.is(delta('platform_http_requests_total', { host_kind: 'app', status: '404' }), 1);
  // the scrape before this one is counted too (its answer was 200 on the API host)
  assert.is(delta('platform_http_requests_total', { host_kind: 'api', status: '200' }), 1);
  const latency = after.families.get('platform_http_request_duration_seconds')!;
  assert.is(latency.type, 'HISTOGRAM');
  // the parser keeps no labels on a histogram's samples: read the one sample line itself
  const timedCount = (text: string) =>
    Number(
      /^platform_http_request_duration_seconds_count\{host_kind="app"\} (\d+)$/m.exec(text)?.[1] ??
        0,
    );
  assert.is(timedCount(after.text) - timedCount(before.text), 8, 'every app answer is timed');
  assert.is(delta('platform_sandbox_calls_total'), 8);
  assert.ok(delta('platform_sandbox_cpu_seconds_total') > 0);
  assert.ok(value(after.families, 'platform_sandbox_workers') >= 1);
  assert.ok(value(after.families, 'platform_sandbox_warm_releases') >= 1);
  assert.ok(value(after.families, 'platform_sandbox_instances') >= 1);
  const heap = value(after.families, 'platform_sandbox_instance_memory_bytes');
  assert.ok(heap > 64 * 1024, `a warm instance holds its heap (${heap} bytes)`);
  assert.ok(value(after.families, 'platform_sandbox_wasm_memory_bytes') >= heap);
  assert.is(delta('platform_outbound_fetches_total'), 1);
  assert.is(delta('platform_outbound_fetch_failures_total'), 1);
  for (const state of ['ready', 'scheduled', 'running', 'failed'])
    assert.ok(after.families.get('platform_jobs')!.metrics.some((m) => m.labels?.state === state));
  assert.ok(value(after.families, 'platform_pg_pool_connections', { state: 'total' }) >= 1);
  assert.ok(after.families.has('platform_event_writer_queued'));
  assert.ok(after.families.has('platform_blob_cache_bytes'));
  assert.ok(after.families.has('process_cpu_seconds_total'), "Node's own figures are there");

  assert.not.ok(after.text.includes(app.appId), 'no label names the app');
  assert.not.ok(after.text.includes(someone.account_id), 'no label names the account');
});

test('every metric the Grafana dashboard in docs/ plots is one this service exposes', async () => {
  const dashboard = readFileSync('docs/grafana-dashboard.json', 'utf8');
  const { families } = await scrape();
  const names = new Set(
    [...dashboard.matchAll(/\b((?:platform|process)_[a-z_]+)/g)].map((m) =>
      m[1]!.replace(/_bucket$/, ''),
    ),
  );
  assert.ok(names.size >= 15);
  for (const name of names) assert.ok(families.has(name), `${name} is exposed`);
});

test.after(async () => {
  await h.close();
  upstream.close();
});
test.run();
