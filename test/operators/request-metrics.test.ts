/** The request path's count and latency as Prometheus reads them (src/metrics/request-metrics.ts). */
import { spawnSync } from 'node:child_process';
import client from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequestMetrics } from '../../src/metrics/request-metrics.ts';

test('counts by host kind and status, latency in cumulative buckets with +Inf, sum and count', async () => {
  const registry = new client.Registry();
  const m = createRequestMetrics(registry);
  for (const [kind, status, s] of [
    ['app', 200, 0.0005],
    ['app', 200, 0.001], // on a bound: counted in that bucket (le is "less or equal")
    ['app', 404, 0.003],
    ['app', 200, 0.2],
    ['app', 500, 20], // beyond the last bound: only +Inf
    ['api', 200, 0.02],
  ] as const)
    m.record(kind, status, s);
  const text = await registry.metrics();
  const sample = (line: string) => {
    const found = text.split('\n').find((l) => l.startsWith(`${line} `));
    assert.ok(found, `${line} in:\n${text}`);
    return Number(found!.slice(line.length + 1));
  };
  assert.is(sample('platform_http_requests_total{host_kind="app",status="200"}'), 3);
  assert.is(sample('platform_http_requests_total{host_kind="app",status="404"}'), 1);
  assert.is(sample('platform_http_requests_total{host_kind="app",status="500"}'), 1);
  assert.is(sample('platform_http_requests_total{host_kind="api",status="200"}'), 1);
  const bucket = (le: string) =>
    sample(`platform_http_request_duration_seconds_bucket{host_kind="app",le="${le}"}`);
  assert.is(bucket('0.001'), 2);
  assert.is(bucket('0.0025'), 2);
  assert.is(bucket('0.005'), 3);
  assert.is(bucket('0.25'), 4);
  assert.is(bucket('10'), 4);
  assert.is(bucket('+Inf'), 5);
  assert.is(sample('platform_http_request_duration_seconds_count{host_kind="app"}'), 5);
  assert.ok(
    Math.abs(sample('platform_http_request_duration_seconds_sum{host_kind="app"}') - 20.2045) <
      1e-9,
  );
  assert.is(sample('platform_http_request_duration_seconds_count{host_kind="api"}'), 1);
  assert.match(text, '# TYPE platform_http_request_duration_seconds histogram');
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.is(checked.status, 0, `${checked.stdout}${checked.stderr}`);
});

test('a reset registry starts again from nothing, as prom-client metrics do', async () => {
  const registry = new client.Registry();
  const m = createRequestMetrics(registry);
  m.record('app', 200, 0.01);
  registry.resetMetrics();
  assert.not.match(await registry.metrics(), 'host_kind="app"');
});

test.run();
