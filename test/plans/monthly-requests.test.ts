/**
 * The monthly request quota, counted by two server instances on one database (two nodes): each
 * counts in memory and flushes; both learn the shared total; past the limit app origins answer
 * 402 `quota_exceeded` and the control plane keeps working. A plans file sets Free's quota to 20.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const plansFile = path.join(tmpdir(), `plans-quota-${process.pid}.json`);
writeFileSync(plansFile, JSON.stringify({ free: { limits: { 'requests.monthly.max': 20 } } }));
const env = { PLATFORM_PLANS_FILE: plansFile, PLATFORM_USAGE_FLUSH_MS: '100' };
const a = await createHarness(env);
const b = await createHarness(env);

test('two nodes share one monthly total; past it the origins answer 402 and the API still works', async () => {
  const u = await newUser(a);
  const published = await a.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  assert.is(published.status, 200, published.text);
  const host = `${published.body.app_id}.apps.localhost`;

  // 10 requests on each node, static hits and not-found answers alike
  for (let i = 0; i < 10; i++) {
    assert.is((await a.call('GET', i % 2 ? '/' : '/missing', { host })).status, i % 2 ? 200 : 404);
    assert.is((await b.call('GET', '/', { host })).status, 200);
  }
  // each node's flush adds its count and reads the other's (the timers do this every 100 ms too)
  await a.server.runtime.meter.flush();
  await b.server.runtime.meter.flush();
  await a.server.runtime.meter.flush();
  for (const node of [a, b]) {
    const refused = await node.call('GET', '/', { host });
    assert.is(refused.status, 402, refused.text);
    assert.is(refused.body.error.code, 'quota_exceeded');
    assert.equal(refused.body.error.details, {
      metric: 'requests.monthly',
      plan_key: 'free',
      limit: 20,
      current: 20,
      increment: 1,
      upgrade_required: true,
    });
    assert.is(refused.headers.get('cache-control'), 'no-store');
  }
  // refused requests are not counted, and the control plane is not metered
  assert.is((await a.answer('GET /v0/apps', { key: u.api_key })).status, 200);
  await a.server.runtime.meter.flush();
  await b.server.runtime.meter.flush();
  const status = await b.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.usage['requests.monthly'], 20);
  assert.is(status.limits['requests.monthly'], 20);
  assert.is(status.restricted, true);
  assert.ok(
    status.warnings.some((w) => w.code === 'limit_reached' && /monthly requests/.test(w.message)),
    JSON.stringify(status.warnings),
  );
  const daily = await a.deps.db
    .selectFrom('usage_counters')
    .select('value')
    .where('app_id', '=', published.body.app_id)
    .where('metric', '=', 'requests')
    .execute();
  assert.is(
    daily.reduce((n, r) => n + Number(r.value), 0),
    20,
    'the per-app daily count adds up too',
  );
});

test('a node that starts later reads the shared total before its first flush', async () => {
  const u = await newUser(a);
  const published = await a.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  const host = `${published.body.app_id}.apps.localhost`;
  for (let i = 0; i < 20; i++) assert.is((await a.call('GET', '/', { host })).status, 200);
  await a.server.runtime.meter.flush();
  const c = await createHarness(env);
  try {
    const refused = await c.call('GET', '/', { host });
    assert.is(refused.status, 402, 'refused from its first request');
    assert.is(refused.body.error.details.current, 20);
  } finally {
    await c.close();
  }
});

test('a failed flush keeps its counts and adds them on the next one', async () => {
  // a node whose timer does not flush during the test: only the flushes below run
  const slow = await createHarness({ ...env, PLATFORM_USAGE_FLUSH_MS: '60000' });
  const u = await newUser(slow);
  const published = await slow.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  const host = `${published.body.app_id}.apps.localhost`;
  const meter = slow.server.runtime.meter;
  for (let i = 0; i < 5; i++) assert.is((await slow.call('GET', '/', { host })).status, 200);
  // Postgres refuses every write to the totals for a moment (a real failed statement)
  await sql`alter table account_usage add constraint flush_fails check (value < 0) not valid`.execute(
    slow.deps.db,
  );
  try {
    await meter.flush();
  } finally {
    await sql`alter table account_usage drop constraint flush_fails`.execute(slow.deps.db);
  }
  assert.is(meter.pending(u.account_id), 5, 'the counts are kept');
  for (let i = 0; i < 2; i++) assert.is((await slow.call('GET', '/', { host })).status, 200);
  await meter.flush();
  assert.is(meter.pending(u.account_id), 0);
  const status = await slow.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.usage['requests.monthly'], 7);
  await slow.close();
});

test.after(async () => {
  await a.close();
  await b.close();
});
test.run();
