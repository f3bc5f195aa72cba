/**
 * App analytics as an owner meets them: real requests through the canonical origin, a slug and a
 * custom domain, to static files, server code and missing paths, with referrers and bots, then
 * `GET /v0/apps/<id>/analytics` after a flush. Also: path and referrer normalisation, app users,
 * jobs and webhooks counted, the entitlement and the plan's clamp, two nodes adding to the same
 * rows, the flush at shutdown and retention. Real catalogue.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { setPlan } from '../../src/plans/operator.ts';
import { operatorVerify } from '../../src/domains/verify.ts';
import { createAnalyticsCollector } from '../../src/analytics/collector.ts';
import { normalisePath, referrerDomain } from '../../src/analytics/normalise.ts';
import { recordEvents } from '../../src/events/record.ts';
import { analyticsRetention } from '../../worker/tasks/analytics-retention.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_PLANS_FILE: '' });
const SERVER = `export default { fetch(req) {
  const p = new URL(req.url).pathname;
  if (p === '/boom') throw new Error('boom');
  return new Response('server ' + p);
} };`;

async function owner(plan: string) {
  const u = await newUser(h);
  if (plan !== 'free') await setPlan(h.deps, { accountId: u.account_id, planKey: plan });
  return u;
}
async function publish(
  key: string,
  body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', '<h1>home</h1>'),
      file('server.js', SERVER, 'text/javascript'),
    ],
  }),
) {
  const r = await h.call('PUT', '/v0/apps', { key, body });
  assert.is(r.status, 200, r.text);
  return r.body.app_id as string;
}
const analytics = (key: string, appId: string, range?: '7d' | '30d' | '90d') =>
  h.answer('GET /v0/apps/{app_id}/analytics', {
    key,
    params: { app_id: appId },
    ...(range ? { query: { range } } : {}),
  });
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';

test('a Free account is told which plan has analytics', async () => {
  const u = await owner('free');
  const appId = await publish(u.api_key, site());
  const r = await analytics(u.api_key, appId);
  assert.is(r.status, 402);
  assert.is(r.error?.code, 'entitlement_required');
  assert.equal(r.error?.details, {
    plan_key: 'free',
    feature_key: 'app_analytics',
    required_plan_key: 'starter',
  });
});

test('requests on every route kind and runtime target show up, normalised, with bots apart', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key);
  const staticOnly = await publish(u.api_key, site({ files: [file('public/index.html', 'x')] }));
  await h.api('POST /v0/apps/{app_id}/slugs', {
    key: u.api_key,
    params: { app_id: appId },
    body: { slug: 'stats-shop' },
  });
  await h.api('POST /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: appId },
    body: { hostname: 'www.stats-one.test' },
  });
  await operatorVerify(h.deps, 'www.stats-one.test');
  const canonical = `${appId}.apps.localhost`;
  const get = async (host: string, path: string, headers: Record<string, string> = {}) =>
    (await h.call('GET', path, { host, headers: { 'user-agent': FIREFOX, ...headers } })).status;

  for (let i = 0; i < 3; i++)
    assert.is(await get(canonical, '/', { referer: 'https://www.News.example/story?id=1' }), 200);
  assert.is(await get(canonical, '/users/42?tab=posts'), 200);
  assert.is(await get(canonical, '/users/123e4567-e89b-12d3-a456-426614174000/posts'), 200);
  assert.is(await get(canonical, '/boom'), 500);
  assert.is(await get('stats-shop.apps.localhost', '/'), 200);
  assert.is(await get('stats-shop.apps.localhost', '/about', { referer: 'not a url' }), 200);
  assert.is(
    await get('www.stats-one.test', '/', { referer: 'https://www.stats-one.test/elsewhere' }),
    200,
  );
  assert.is(await get(canonical, '/', { 'user-agent': GOOGLEBOT }), 200);
  assert.is(await get(canonical, '/secret-bot-path', { 'user-agent': GOOGLEBOT }), 200);
  assert.is(await get(`${staticOnly}.apps.localhost`, '/missing'), 404);
  await h.server.runtime.analytics.flush();

  const r = await analytics(u.api_key, appId);
  assert.is(r.status, 200, r.text);
  const a = r.body!;
  assert.is(a.range, '7d');
  assert.is(a.clamped_to_days, null);
  assert.equal(a.totals, { requests: 9, bot_requests: 2 });
  assert.is(a.daily.length, 7);
  assert.is(a.daily.at(-1)!.date, new Date().toISOString().slice(0, 10));
  assert.is(a.daily.at(-1)!.requests, 9);
  assert.ok(
    a.daily.slice(0, 6).every((d) => d.requests === 0),
    'zero-filled',
  );
  assert.equal(a.status_buckets, { '2xx': 8, '3xx': 0, '4xx': 0, '5xx': 1 });
  assert.equal(a.routes, { canonical: 6, slug: 2, custom_domain: 1 });
  assert.equal(a.runtime_targets, { static: 5, server: 4, not_found: 0 });
  assert.equal(a.top_paths, [
    { path: '/', requests: 5 },
    { path: '/about', requests: 1 },
    { path: '/boom', requests: 1 },
    { path: '/users/:id', requests: 1 },
    { path: '/users/:id/posts', requests: 1 },
  ]);
  assert.ok(!JSON.stringify(a).includes('secret-bot-path'), "bots' paths are not listed");
  assert.equal(a.referrers, [
    { domain: '(direct)', requests: 6 },
    { domain: 'news.example', requests: 3 },
  ]);
  const err = a.recent_errors[0]!;
  assert.is(err.type, 'runtime.request_error');
  assert.is(err.severity, 'error');

  const other = (await analytics(u.api_key, staticOnly)).body!;
  assert.equal(other.runtime_targets, { static: 0, server: 0, not_found: 1 });
  assert.equal(other.status_buckets['4xx'], 1);
  // nothing identifying was stored
  const stored = await sql<{
    t: string;
  }>`select string_agg(t::text, ' ') as t from (select * from analytics_traffic union all select app_id, day, path, '', '', false, requests from analytics_paths union all select app_id, day, domain, '', '', false, requests from analytics_referrers) t`.execute(
    h.deps.db,
  );
  for (const secret of ['Firefox', 'Googlebot', 'tab=posts', '127.0.0.1', 'story?id'])
    assert.not.match(stored.rows[0]!.t, secret);
});

test('the range is clamped to the plan, and says so', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  const month = (await analytics(u.api_key, appId, '30d')).body!;
  assert.is(month.range, '30d');
  assert.is(month.clamped_to_days, 7);
  assert.is(month.daily.length, 7);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' });
  const quarter = (await analytics(u.api_key, appId, '90d')).body!;
  assert.is(quarter.clamped_to_days, 30);
  assert.is(quarter.daily.length, 30);
  assert.is((await analytics(u.api_key, appId, '30d')).body!.clamped_to_days, null);
  const bad = await h.call('GET', `/v0/apps/${appId}/analytics?range=1y`, { key: u.api_key });
  assert.is(bad.status, 400);
  const stranger = await newUser(h);
  assert.is((await analytics(stranger.api_key, appId)).status, 404);
});

test('app users, jobs and webhooks are counted per app and day', async () => {
  const u = await owner('starter');
  const body = site({ resources: { auth: { mode: 'app_users', public_signup: true } } });
  const appId = await publish(u.api_key, body);
  const host = `${appId}.apps.localhost`;
  const creds = { email: 'ann@example.com', password: 'correct horse battery' };
  assert.is((await h.call('POST', '/_platform/auth/signup', { host, body: creds })).status, 201);
  assert.is((await h.call('POST', '/_platform/auth/login', { host, body: creds })).status, 200);
  // the worker and the webhook route record exactly these events (test/jobs); each one is counted as it is written
  const base = { app_id: appId, account_id: u.account_id, message: 'x' };
  await recordEvents(h.deps.db, [
    { ...base, type: 'job.succeeded' },
    { ...base, type: 'job.succeeded' },
    { ...base, type: 'job.retry', severity: 'warn' },
    { ...base, type: 'job.failed', severity: 'error' },
    { ...base, type: 'webhook.received' },
    { ...base, type: 'webhook.delivered' },
    { ...base, type: 'webhook.rejected', severity: 'warn' },
    { ...base, type: 'job.enqueued' },
  ]);
  const a = (await analytics(u.api_key, appId)).body!;
  assert.equal(a.app_users, { signups: 1, sessions_created: 2 });
  assert.equal(a.jobs, { succeeded: 2, retry: 1, failed: 1, blocked: 0 });
  assert.equal(a.webhooks, { received: 1, delivered: 1, rejected: 1, delivery_failed: 0 });
  assert.is(a.recent_errors.length, 1);
});

test('two nodes add to the same rows; a node flushes what it counted when it stops', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  const visit = {
    appId,
    status: 200,
    via: 'canonical' as const,
    target: 'static' as const,
    pathname: '/two-nodes',
    host: 'x',
    referrer: 'https://ref.example/',
    userAgent: FIREFOX,
  };
  const a = createAnalyticsCollector({ db: h.deps.db, log: h.deps.log, flushMs: 3_600_000 });
  const b = createAnalyticsCollector({ db: h.deps.db, log: h.deps.log, flushMs: 3_600_000 });
  for (let i = 0; i < 5; i++) a.add(visit);
  for (let i = 0; i < 7; i++) b.add(visit);
  await Promise.all([a.flush(), b.flush()]);
  b.add(visit);
  await b.close(); // the stop drains what is pending
  await a.close();
  const r = (await analytics(u.api_key, appId)).body!;
  assert.is(r.totals.requests, 13);
  assert.equal(r.top_paths, [{ path: '/two-nodes', requests: 13 }]);
  assert.equal(r.referrers, [{ domain: 'ref.example', requests: 13 }]);
});

test('a flush that fails keeps its counts for the next one, and nothing is counted twice', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  const c = createAnalyticsCollector({ db: h.deps.db, log: h.deps.log, flushMs: 3_600_000 });
  const visit = {
    appId,
    status: 200,
    via: 'canonical' as const,
    target: 'static' as const,
    pathname: '/kept',
    host: 'x',
    referrer: 'https://kept.example/',
    userAgent: FIREFOX,
  };
  for (let i = 0; i < 4; i++) c.add(visit);
  // the referrers table is unavailable for one flush: traffic and paths go in, referrers stay in memory
  await sql`alter table analytics_referrers rename to analytics_referrers_away`.execute(h.deps.db);
  try {
    await c.flush();
  } finally {
    await sql`alter table analytics_referrers_away rename to analytics_referrers`.execute(
      h.deps.db,
    );
  }
  assert.is(c.pending(), 1, 'the failed chunk is back in memory');
  c.add(visit);
  await c.close();
  const r = (await analytics(u.api_key, appId)).body!;
  assert.is(r.totals.requests, 5);
  assert.equal(r.top_paths, [{ path: '/kept', requests: 5 }]);
  assert.equal(r.referrers, [{ domain: 'kept.example', requests: 5 }]);
});

test('a count the database can never take is dropped alone; the counts beside it are written', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  const errors: string[] = [];
  const log = { ...h.deps.log, error: (msg: string) => void errors.push(msg) };
  const c = createAnalyticsCollector({ db: h.deps.db, log, flushMs: 3_600_000 });
  const visit = {
    appId,
    status: 200,
    via: 'canonical' as const,
    target: 'static' as const,
    host: 'x',
    referrer: null,
    userAgent: FIREFOX,
  };
  // Postgres stores no NUL in text: this path's row is refused with a data error (no request line carries one
  // today; the collector must not let one row hold back the chunk it shares with others)
  c.add({ ...visit, pathname: '/before' });
  c.add({ ...visit, pathname: '/bad\0path' });
  c.add({ ...visit, pathname: '/after' });
  await c.flush();
  assert.is(c.pending(), 0, 'nothing is kept to be retried forever');
  assert.equal(errors, ['an analytics count was refused by the database and dropped']);
  c.add({ ...visit, pathname: '/after' });
  await c.close();
  const r = (await analytics(u.api_key, appId)).body!;
  assert.is(r.totals.requests, 4, 'every request is counted in traffic');
  assert.equal(
    r.top_paths.map((p: { path: string; requests: number }) => [p.path, p.requests]).sort(),
    [
      ['/after', 2],
      ['/before', 1],
    ],
  );
});

test('paths lose queries and ids; referrers keep only a domain', () => {
  assert.is(normalisePath('/'), '/');
  assert.is(normalisePath('/users/42/edit'), '/users/:id/edit');
  assert.is(normalisePath('/p/550e8400-e29b-41d4-a716-446655440000'), '/p/:id');
  assert.is(normalisePath('/c/5f2b9a0c3d1e4f6a7b8c'), '/c/:id');
  assert.is(normalisePath('/t/AbC123xYz456QwE789'), '/t/:id');
  assert.is(normalisePath('/blog/a-very-long-article-title'), '/blog/a-very-long-article-title');
  assert.is(normalisePath('/search?q=secret#frag'), '/search');
  assert.is(referrerDomain('https://WWW.Example.com/a?b=c', 'app.test'), 'example.com');
  assert.is(referrerDomain('http://news.site.test:8080/', 'app.test'), 'news.site.test');
  assert.is(referrerDomain('https://app.test/page', 'app.test'), '(direct)');
  assert.is(referrerDomain('android-app://com.x/', 'app.test'), '(direct)');
  assert.is(referrerDomain('garbage', 'app.test'), '(direct)');
});

test('a day keeps its top 100 paths; the rest fold into (other)', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  const c = createAnalyticsCollector({ db: h.deps.db, log: h.deps.log, flushMs: 3_600_000 });
  for (let i = 0; i < 130; i++)
    c.add({
      appId,
      status: 200,
      via: 'canonical',
      target: 'static',
      pathname: `/page-${i}`,
      host: 'x',
      referrer: null,
      userAgent: FIREFOX,
    });
  await c.close();
  const rows = await h.deps.db
    .selectFrom('analytics_paths')
    .select(['path', 'requests'])
    .where('app_id', '=', appId)
    .execute();
  assert.is(rows.length, 101);
  assert.is(Number(rows.find((r) => r.path === '(other)')!.requests), 30);
});

test('retention deletes aggregates older than the longest plan window', async () => {
  const u = await owner('starter');
  const appId = await publish(u.api_key, site());
  await sql`insert into analytics_traffic (app_id, day, route_kind, target, status_bucket, bot, requests) values
    (${appId}, current_date - 120, 'canonical', 'static', '2xx', false, 5), (${appId}, current_date - 10, 'canonical', 'static', '2xx', false, 7)`.execute(
    h.deps.db,
  );
  await sql`insert into analytics_paths (app_id, day, path, requests) values (${appId}, current_date - 120, '/old', 5)`.execute(
    h.deps.db,
  );
  const r = await analyticsRetention(h.deps);
  assert.is(r.days, 90);
  assert.ok(r.deleted >= 2);
  const left = await sql<{
    n: number;
  }>`select count(*)::int as n from analytics_traffic where app_id = ${appId}`.execute(h.deps.db);
  assert.is(left.rows[0]!.n, 1);
});

test.after(() => h.close());
test.run();
