/**
 * Plans as an account owner meets them: the status, limits and downgrade-preview records, the
 * plan's limits at publish, its CPU limit at run time, a downgrade that does exactly what its
 * preview said, operator flags on both planes, webhooks and billing access. The real catalogue
 * (no test plans file).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { setBillingState, setFlag, setPlan } from '../../src/plans/operator.ts';
import { newId } from '../../src/lib/ids.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';
import { eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';

const h = await createHarness({ PLATFORM_PLANS_FILE: '' });

async function publishNew(key: string, body = site()) {
  return h.call('PUT', '/v0/apps', { key, body });
}

/** Alias routes as the domains feature will create them (that feature is not built yet). */
async function addRoute(
  accountId: string,
  appId: string,
  type: 'slug' | 'custom_domain',
  hostname: string,
  ageSeconds: number,
): Promise<string> {
  const id = newId('route');
  await sql`insert into app_routes (id, app_id, account_id, route_type, hostname, status, created_at)
    values (${id}, ${appId}, ${accountId}, ${type}, ${hostname}, 'active', now() - make_interval(secs => ${ageSeconds}))`.execute(
    h.deps.db,
  );
  return id;
}

test('a new account is on Free: status, limits and a preview, as records', async () => {
  const u = await newUser(h);
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.plan_key, 'free');
  assert.is(status.billing_access_state, 'active');
  assert.is(status.grace_ends_at, null);
  assert.equal(status.active_flags, []);
  assert.is(status.suspended, false);
  assert.is(status.restricted, false);
  assert.equal(status.usage, {
    apps: 0,
    'requests.monthly': 0,
    app_slugs: 0,
    custom_domains: 0,
    'storage.bytes': 0,
  });
  assert.equal(status.limits, {
    apps: 3,
    'requests.monthly': 100_000,
    app_slugs: 0,
    custom_domains: 0,
    'storage.bytes': 1024 ** 3,
  });
  assert.equal(status.route_counts, { slugs: 0, custom_domains: 0 });
  const month = new Date().toISOString().slice(0, 7);
  assert.ok(
    status.usage_period.period_start.startsWith(`${month}-01T00:00:00`),
    status.usage_period.period_start,
  );
  assert.ok(status.usage_period.period_end > status.usage_period.period_start);

  const limits = await h.api('GET /v0/accounts/{account_id}/limits', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.equal(limits.features, {
    app_slugs: false,
    custom_domains: false,
    app_analytics: false,
    webhooks: false,
  });
  assert.equal(limits.deployment_limits, {
    'apps.max': 3,
    'app_slugs.max': 0,
    'custom_domains.max': 0,
  });
  assert.equal(limits.manifest_limits, { 'data.collections.max': 5 });
  assert.equal(limits.runtime_limits, {
    'server.cpu_ms.max': 1000,
    'jobs.waiting.max': 1000,
    'queues.waiting.max': 1000,
    'bindings.operations.max': 1000,
  });
  assert.equal(limits.release_limits, { 'release.file_count.max': 500 });
  assert.is(limits.usage_limits['requests.monthly.max'], 100_000);
  assert.is(limits.usage_limits['storage.bytes.max'], 1024 ** 3);
  assert.is(limits.usage_limits['events.retention_days'], 1);
  assert.is(limits.usage_limits['analytics.retention_days'], 0);

  const up = await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'business' },
  });
  assert.equal(up, {
    account_id: u.account_id,
    current_plan_key: 'free',
    target_plan_key: 'business',
    compatible: true,
    violations: [],
    actions: [],
  });
  const bad = await h.answer('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'gold' as never },
  });
  assert.is(bad.status, 400);
  const none = await h.answer('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
  } as never);
  assert.is(none.status, 400);
});

test('members of any role read the standing; a stranger gets 404', async () => {
  const owner = await newUser(h);
  const viewer = await newMember(h, owner.account_id, 'viewer');
  const stranger = await newUser(h);
  for (const route of [
    'GET /v0/accounts/{account_id}/status',
    'GET /v0/accounts/{account_id}/limits',
  ] as const) {
    assert.is(
      (await h.answer(route, { key: viewer.api_key, params: { account_id: owner.account_id } }))
        .status,
      200,
    );
    assert.is(
      (await h.answer(route, { key: stranger.api_key, params: { account_id: owner.account_id } }))
        .status,
      404,
    );
    assert.is(
      (await h.answer(route, { key: null, params: { account_id: owner.account_id } })).status,
      401,
    );
  }
});

test('Free allows 3 apps: the fourth is refused with what to do, stores nothing, and fits again after an unpublish', async () => {
  const u = await newUser(h);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await publishNew(u.api_key);
    assert.is(r.status, 200, r.text);
    ids.push(r.body.app_id);
  }
  const fourth = await publishNew(u.api_key, site({ app: { name: 'One too many' } }));
  assert.is(fourth.status, 402, fourth.text);
  assert.is(fourth.body.error.code, 'plan_limit_exceeded');
  assert.equal(fourth.body.error.details, {
    limit_key: 'apps.max',
    plan_key: 'free',
    allowed: 3,
    current: 4,
    required_plan_key: 'starter',
  });
  assert.match(fourth.body.error.message, /Free plan allows 3 published apps/);
  assert.match(fourth.body.error.message, /Unpublish an app/);
  assert.match(fourth.body.error.message, /ask this server's operator for Starter \(10\)/);
  const apps = await h.api('GET /v0/apps', { key: u.api_key });
  assert.is(apps.apps.length, 3);
  const rows = await h.deps.db
    .selectFrom('apps')
    .select('id')
    .where('account_id', '=', u.account_id)
    .execute();
  assert.is(rows.length, 3, 'no app row was created');

  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.usage.apps, 3);
  assert.ok(
    status.warnings.some((w) => w.code === 'limit_reached' && /3 apps/.test(w.message)),
    JSON.stringify(status.warnings),
  );

  // republishing an existing app is not growth
  assert.is(
    (await h.call('PUT', `/v0/apps/${ids[0]}`, { key: u.api_key, body: site() })).status,
    200,
  );
  await h.api('DELETE /v0/apps/{app_id}', { key: u.api_key, params: { app_id: ids[0]! } });
  assert.is((await publishNew(u.api_key)).status, 200);
  // publishing the tombstoned app again would make four
  const back = await h.call('PUT', `/v0/apps/${ids[0]}`, { key: u.api_key, body: site() });
  assert.is(back.status, 402, back.text);
  assert.is(back.body.error.details.limit_key, 'apps.max');
});

test('files per release and collections per app follow the plan; nothing is stored when refused', async () => {
  const u = await newUser(h);
  const many = Array.from({ length: 501 }, (_, i) =>
    file(`public/p${i}.txt`, `${i}`, 'text/plain'),
  );
  const tooMany = await publishNew(
    u.api_key,
    site({ files: [file('public/index.html', 'x'), ...many.slice(0, 500)] }),
  );
  assert.is(tooMany.status, 402, tooMany.text);
  assert.equal(tooMany.body.error.details, {
    limit_key: 'release.file_count.max',
    plan_key: 'free',
    allowed: 500,
    current: 501,
    required_plan_key: 'starter',
  });
  const collections = Object.fromEntries(
    Array.from({ length: 6 }, (_, i) => [`c${i}`, { fields: { title: 'string' } }]),
  );
  const tooManyCollections = await publishNew(
    u.api_key,
    site({ resources: { data: { collections } } }),
  );
  assert.is(tooManyCollections.status, 402, tooManyCollections.text);
  assert.equal(tooManyCollections.body.error.details, {
    limit_key: 'data.collections.max',
    plan_key: 'free',
    allowed: 5,
    current: 6,
    required_plan_key: 'starter',
  });
  const blobs = await h.deps.db
    .selectFrom('blobs')
    .select('sha256')
    .where('account_id', '=', u.account_id)
    .execute();
  assert.is(blobs.length, 0, 'no file was stored');
  // the same bundle fits Starter
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  assert.is(
    (await publishNew(u.api_key, site({ resources: { data: { collections } } }))).status,
    200,
  );
});

test("the plan's server.cpu_ms.max is each call's CPU limit", async () => {
  const u = await newUser(h);
  // a fixed amount of work (CPU time is billed, not the wall clock), near 2.5 s of CPU on these
  // machines: over Free's 1,000 ms, within Business Plus's 10,000 ms, with room for a faster or slower one
  const app = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch() { let n = 0; for (let i = 0; i < 3e7; i++) n += i; return new Response('done ' + (n > 0)); } };`,
  );
  const free = await h.call('GET', '/spin', { host: app.host });
  assert.is(free.status, 500, free.text);
  assert.is(free.body.error.code, 'runtime_error');
  const [err] = await eventsOf(h, u.api_key, app.appId, 'runtime.request_error');
  assert.match(String(err?.metadata.error), /1000 ms of CPU/);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'business_plus' });
  const businessPlus = await h.call('GET', '/spin', { host: app.host });
  assert.is(businessPlus.status, 200, businessPlus.text);
  assert.is(businessPlus.text, 'done true');
});

test('a downgrade does exactly what its preview said: routes over the limit disabled, never deleted', async () => {
  const u = await newUser(h);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' });
  const app = (await publishNew(u.api_key)).body.app_id as string;
  const oldSlug = await addRoute(u.account_id, app, 'slug', `old-${app}.apps.localhost`, 300);
  const newSlug = await addRoute(u.account_id, app, 'slug', `new-${app}.apps.localhost`, 100);
  const oldDomain = await addRoute(
    u.account_id,
    app,
    'custom_domain',
    `old-${app}.example.com`,
    200,
  );
  const newDomain = await addRoute(
    u.account_id,
    app,
    'custom_domain',
    `new-${app}.example.com`,
    50,
  );

  const toStarter = await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'starter' },
  });
  assert.is(toStarter.compatible, true);
  assert.equal(
    toStarter.actions.map((a) => a.route_id),
    [newDomain],
    'Starter keeps 1 custom domain (the oldest) and both slugs',
  );
  assert.is(toStarter.violations[0]?.type, 'route');
  assert.is(toStarter.violations[0]?.key, 'custom_domains.max');

  const toFree = await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'free' },
  });
  assert.is(toFree.compatible, true);
  assert.equal(
    new Set(toFree.actions.map((a) => a.route_id)),
    new Set([oldSlug, newSlug, oldDomain, newDomain]),
  );
  assert.ok(toFree.actions.every((a) => a.action === 'disable_route' && a.reason.length > 0));

  const done = await setPlan(h.deps, { accountId: u.account_id, planKey: 'free' });
  assert.equal(done.actions, toFree.actions, 'the change took the actions the preview listed');
  assert.equal(done.violations, toFree.violations);
  const routes = await h.deps.db
    .selectFrom('app_routes')
    .select(['id', 'status'])
    .where('account_id', '=', u.account_id)
    .execute();
  assert.is(routes.length, 4, 'nothing was deleted');
  assert.ok(
    routes.every((r) => r.status === 'disabled_downgrade'),
    JSON.stringify(routes),
  );
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.plan_key, 'free');
  // disabled routes still hold their names: counted, though they no longer serve
  assert.equal(status.route_counts, { slugs: 2, custom_domains: 2 });
  assert.equal(status.compatibility_warnings, []);
  const row = await h.deps.db
    .selectFrom('accounts')
    .select(['entitlement_source'])
    .where('id', '=', u.account_id)
    .executeTakeFirstOrThrow();
  assert.is(row.entitlement_source, 'default');
});

test('a downgrade the account does not fit is refused; forced, it deletes nothing and blocks growth', async () => {
  const u = await newUser(h);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  for (let i = 0; i < 4; i++) assert.is((await publishNew(u.api_key)).status, 200);
  const preview = await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'free' },
  });
  assert.is(preview.compatible, false);
  assert.equal(
    preview.violations.map((v) => [v.type, v.key, v.current, v.allowed]),
    [['limit', 'apps.max', 4, 3]],
  );
  assert.match(preview.violations[0]!.message, /Unpublish 1 first/);

  try {
    await setPlan(h.deps, { accountId: u.account_id, planKey: 'free' });
    assert.unreachable('the downgrade should be refused');
  } catch (err) {
    const e = err as { code?: string; status?: number; details?: Record<string, unknown> };
    assert.is(e.code, 'downgrade_incompatible');
    assert.is(e.status, 409);
    assert.is((e.details?.violations as unknown[] | undefined)?.length, 1);
  }
  let status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.plan_key, 'starter', 'a refused downgrade changes nothing');

  await setPlan(h.deps, { accountId: u.account_id, planKey: 'free', force: true });
  status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.plan_key, 'free');
  assert.is(status.usage.apps, 4, 'no app was deleted');
  assert.is(status.restricted, true);
  assert.equal(
    status.compatibility_warnings.map((v) => v.key),
    ['apps.max'],
  );
  assert.ok(status.warnings.some((w) => w.code === 'plan_incompatible'));
  const more = await publishNew(u.api_key);
  assert.is(more.status, 402);
  assert.is(more.body.error.code, 'plan_limit_exceeded');
});

test('operator flags: a suspended account reads but cannot change anything, and its apps answer 403 until cleared', async () => {
  const u = await newUser(h);
  const app = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch() { return new Response('up'); } };`,
  );
  assert.is((await h.call('GET', '/', { host: app.host })).text, 'static');
  await setFlag(h.deps, {
    accountId: u.account_id,
    flag: 'suspended',
    reason: 'Phishing report #42',
    clear: false,
  });

  const served = await h.call('GET', '/', { host: app.host });
  assert.is(served.status, 403);
  assert.is(served.body.error.code, 'account_suspended');
  assert.not.match(served.text, /Phishing/, 'visitors do not see the reason');
  assert.is(
    (await h.call('GET', '/anything', { host: app.host })).body.error.code,
    'account_suspended',
  );
  const publish = await h.call('PUT', `/v0/apps/${app.appId}`, { key: u.api_key, body: site() });
  assert.is(publish.status, 403);
  assert.is(publish.body.error.code, 'account_suspended');
  assert.is((await publishNew(u.api_key)).body.error.code, 'account_suspended');
  const secret = await h.call('PUT', `/v0/apps/${app.appId}/secrets/TOKEN`, {
    key: u.api_key,
    body: { value: 'x' },
  });
  assert.is(secret.body.error.code, 'account_suspended');
  assert.is(
    (await h.answer('GET /v0/apps', { key: u.api_key })).status,
    200,
    'reading still works',
  );

  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.suspended, true);
  assert.equal(
    status.active_flags.map((f) => [f.scope, f.flag, f.reason]),
    [['account', 'suspended', 'Phishing report #42']],
  );
  assert.ok(status.reasons.some((r) => r.includes('Phishing report #42')));

  await setFlag(h.deps, { accountId: u.account_id, flag: 'suspended', clear: true });
  assert.is((await h.call('GET', '/', { host: app.host })).status, 200);
  assert.is(
    (await h.call('PUT', `/v0/apps/${app.appId}`, { key: u.api_key, body: site() })).status,
    200,
  );
});

test('operator flags on an app: suspended answers 403, taken down 451, on its origin and for changes', async () => {
  const u = await newUser(h);
  const a = (await publishNew(u.api_key)).body.app_id as string;
  const b = (await publishNew(u.api_key)).body.app_id as string;
  await setFlag(h.deps, { appId: a, flag: 'suspended', reason: 'Spam', clear: false });
  await setFlag(h.deps, { appId: b, flag: 'takedown', reason: 'Court order 7', clear: false });
  const sa = await h.call('GET', '/', { host: `${a}.apps.localhost` });
  assert.is(sa.status, 403);
  assert.is(sa.body.error.code, 'app_suspended');
  const sb = await h.call('GET', '/', { host: `${b}.apps.localhost` });
  assert.is(sb.status, 451);
  assert.is(sb.body.error.code, 'app_takedown');
  assert.is(
    (await h.call('PUT', `/v0/apps/${a}`, { key: u.api_key, body: site() })).body.error.code,
    'app_suspended',
  );
  const pb = await h.call('PUT', `/v0/apps/${b}`, { key: u.api_key, body: site() });
  assert.is(pb.status, 451);
  assert.is(pb.body.error.code, 'app_takedown');
  assert.is(
    (await h.answer('GET /v0/apps/{app_id}', { key: u.api_key, params: { app_id: b } })).status,
    200,
    'the owner can still read it',
  );
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.suspended, false);
  assert.equal(
    status.active_flags.map((f) => [f.app_id, f.flag]).sort(),
    [
      [a, 'suspended'],
      [b, 'takedown'],
    ].sort(),
  );
  await setFlag(h.deps, { appId: b, flag: 'takedown', clear: true });
  assert.is((await h.call('GET', '/', { host: `${b}.apps.localhost` })).status, 200);
});

test('webhooks need a plan with them; after a forced downgrade deliveries are rejected and logged', async () => {
  const u = await newUser(h);
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file(
        'server.js',
        `export default { fetch() { return new Response('ok'); }, webhook() { return new Response('got it'); } };`,
        'text/javascript',
      ),
    ],
    resources: { webhooks: { hook: { provider: 'none' } } },
  });
  const free = await publishNew(u.api_key, body);
  assert.is(free.status, 402, free.text);
  assert.is(free.body.error.code, 'entitlement_required');
  assert.equal(free.body.error.details, {
    plan_key: 'free',
    feature_key: 'webhooks',
    required_plan_key: 'starter',
  });
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  const app = (await publishNew(u.api_key, body)).body.app_id as string;
  const host = `${app}.apps.localhost`;
  assert.is(
    (await h.call('POST', '/_platform/webhooks/hook', { host, body: { a: 1 } })).text,
    'got it',
  );

  await setPlan(h.deps, { accountId: u.account_id, planKey: 'free', force: true });
  const refused = await h.call('POST', '/_platform/webhooks/hook', { host, body: { a: 1 } });
  assert.is(refused.status, 402);
  assert.is(refused.body.error.code, 'entitlement_required');
  const [rejected] = await eventsOf(h, u.api_key, app, 'webhook.rejected');
  assert.is(rejected?.metadata.reason, 'plan_without_webhooks');
  // republishing what is already provisioned is allowed (the app is not cut off from fixes)
  assert.is((await h.call('PUT', `/v0/apps/${app}`, { key: u.api_key, body })).status, 200);
});

test('past_due_grace keeps apps online, records the grace end, and blocks new paid features', async () => {
  const u = await newUser(h);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  const plain = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'online'),
      file(
        'server.js',
        `export default { fetch() { return new Response('ok'); }, webhook() { return new Response('hooked'); } };`,
        'text/javascript',
      ),
    ],
    resources: { webhooks: { first: { provider: 'none' } } },
  });
  const app = (await publishNew(u.api_key, plain)).body.app_id as string;
  const now = new Date();
  await setBillingState(h.deps, {
    accountId: u.account_id,
    state: 'past_due_grace',
    graceDays: 5,
    now,
  });

  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.billing_access_state, 'past_due_grace');
  assert.is(status.grace_ends_at, new Date(now.getTime() + 5 * 86_400_000).toISOString());
  assert.is(status.restricted, true);
  assert.ok(status.warnings.some((w) => w.code === 'billing_past_due'));
  assert.is((await h.call('GET', '/', { host: `${app}.apps.localhost` })).text, 'online');
  assert.is(
    (await h.call('POST', '/_platform/webhooks/first', { host: `${app}.apps.localhost`, body: {} }))
      .text,
    'hooked',
    'existing webhooks keep working',
  );

  const added = await h.call('PUT', `/v0/apps/${app}`, {
    key: u.api_key,
    body: {
      ...plain,
      resources: { webhooks: { first: { provider: 'none' }, second: { provider: 'none' } } },
    },
  });
  assert.is(added.status, 402, added.text);
  assert.is(added.body.error.code, 'billing_restricted');
  assert.is(added.body.error.details.grace_ends_at, status.grace_ends_at);
  assert.is(
    (await h.call('PUT', `/v0/apps/${app}`, { key: u.api_key, body: plain })).status,
    200,
    'publishing what it already has is fine',
  );

  await setBillingState(h.deps, { accountId: u.account_id, state: 'active' });
  assert.is(
    (
      await h.call('PUT', `/v0/apps/${app}`, {
        key: u.api_key,
        body: {
          ...plain,
          resources: { webhooks: { first: { provider: 'none' }, second: { provider: 'none' } } },
        },
      })
    ).status,
    200,
  );
});

test('jobs of a suspended app are blocked, not run', async () => {
  const u = await newUser(h);
  const app = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch() { return new Response('x'); }, job(e, ctx) { ctx.log.info('ran'); } };`,
    { resources: { jobs: { work: {} } } },
  );
  await setFlag(h.deps, { appId: app.appId, flag: 'suspended', reason: 'Abuse', clear: false });
  const { appJobTask } = await import('../../worker/tasks/app-job.ts');
  const task = appJobTask(h.deps, h.server.runtime);
  await task(
    {
      job_id: 'j1',
      app_id: app.appId,
      job_name: 'work',
      payload: {},
      scheduled_for: new Date().toISOString(),
      source: 'enqueue',
    },
    { job: { attempts: 1, max_attempts: 3 }, logger: { error() {}, info() {} } } as never,
  );
  const blocked = await waitFor(
    async () => (await eventsOf(h, u.api_key, app.appId, 'job.blocked'))[0],
  );
  assert.match(blocked.message, /suspended/);
  assert.is((await eventsOf(h, u.api_key, app.appId, 'runtime.log.info')).length, 0);
});

test.after(() => h.close());
test.run();
