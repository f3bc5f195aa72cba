/**
 * Operators: the first user of a fresh install becomes one; `admin grant-operator` names more; the
 * `/v0/operator` routes answer operators only (every role of every account, and a revoked operator,
 * get 403); each action changes what users observe and is recorded with who took it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { createHarness, newMember, newUser, uniqueEmail } from '../_lib/harness.ts';
import { createUser } from '../../src/users/service.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';

const run = promisify(execFile);
const h = await createHarness({ PLATFORM_PLANS_FILE: '' });
// this file's database is fresh: the first user created here is the install's first user
const first = await newUser(h, 'first');
const other = await newUser(h, 'other');

async function admin(...args: string[]) {
  const out = await run(process.execPath, [...ADMIN_ARGS, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      PLATFORM_LOG_LEVEL: 'silent',
    },
  }).catch((e) => e);
  return {
    code: (out.code as number | undefined) ?? 0,
    json: JSON.parse(String(out.stdout).trim().split('\n').pop()!),
  };
}

const ROUTES = (accountId: string, appId: string) => [
  { method: 'GET', path: '/v0/operator/accounts' },
  { method: 'GET', path: `/v0/operator/accounts/${accountId}/apps` },
  { method: 'PUT', path: `/v0/operator/accounts/${accountId}/plan`, body: { plan: 'business' } },
  {
    method: 'PUT',
    path: `/v0/operator/accounts/${accountId}/billing-state`,
    body: { state: 'active' },
  },
  {
    method: 'PUT',
    path: `/v0/operator/accounts/${accountId}/flags/suspended`,
    body: { reason: 'test' },
  },
  { method: 'DELETE', path: `/v0/operator/accounts/${accountId}/flags/suspended` },
  { method: 'PUT', path: `/v0/operator/apps/${appId}/flags/takedown`, body: { reason: 'test' } },
  { method: 'DELETE', path: `/v0/operator/apps/${appId}/flags/takedown` },
  { method: 'GET', path: '/v0/operator/health' },
  { method: 'GET', path: '/v0/operator/actions' },
  { method: 'GET', path: '/v0/operator/operators' },
];

test('the first user of a fresh install is its operator; the second is not', async () => {
  const ops = await h.api('GET /v0/operator/operators', { key: first.api_key });
  assert.equal(
    ops.operators.map((o) => [o.user_id, o.granted_by]),
    [[first.user_id, 'first user']],
  );
  const refused = await h.answer('GET /v0/operator/operators', { key: other.api_key });
  assert.is(refused.status, 403);
  assert.is(refused.error?.code, 'forbidden');
  assert.match(refused.error!.message, /grant-operator/);
});

test('no one but an operator reaches any operator route, whatever their role', async () => {
  const app = await h.api('PUT /v0/apps', { key: other.api_key, body: site() as never });
  const roles = await Promise.all(
    (['owner', 'admin', 'developer', 'viewer'] as const).map((r) =>
      newMember(h, first.account_id, r),
    ),
  );
  for (const route of ROUTES(other.account_id, app.app_id)) {
    await checkAuthMatrix(h, route);
    for (const key of [other.api_key, ...roles.map((m) => m.api_key)]) {
      const r = await h.call(route.method, route.path, { key, body: route.body });
      assert.is(r.status, 403, `${route.method} ${route.path}: ${r.text}`);
      assert.is(r.body.error.code, 'forbidden');
    }
  }
  // nothing changed for the refused calls
  const standing = await h.api('GET /v0/accounts/{account_id}/status', {
    key: other.api_key,
    params: { account_id: other.account_id },
  });
  assert.is(standing.plan_key, 'free');
  assert.equal(standing.active_flags, []);
});

test("an operator sees every account, changes plans, suspends, takes down; users see it; it's recorded", async () => {
  const owner = await newUser(h, 'acme');
  const app = await h.api('PUT /v0/apps', { key: owner.api_key, body: site() as never });
  const host = `${app.app_id}.apps.localhost`;
  assert.is((await h.call('GET', '/', { host })).status, 200);

  const found = await h.api('GET /v0/operator/accounts', {
    key: first.api_key,
    query: { q: owner.account_id },
  });
  assert.is(found.accounts.length, 1);
  const row = found.accounts[0]!;
  assert.is(row.plan_key, 'free');
  assert.is(row.apps, 1);
  assert.ok(row.stored_bytes > 0, 'the published files count as stored');
  assert.match(row.owner_email, /^acme-/);
  const byEmail = await h.api('GET /v0/operator/accounts', {
    key: first.api_key,
    query: { q: row.owner_email.slice(0, 12) },
  });
  assert.ok(
    byEmail.accounts.some((a) => a.id === owner.account_id),
    'found by part of an e-mail',
  );

  const planned = await h.api('PUT /v0/operator/accounts/{account_id}/plan', {
    key: first.api_key,
    params: { account_id: owner.account_id },
    body: { plan: 'business' },
  });
  assert.is(planned.plan_key, 'business');
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: owner.api_key,
    params: { account_id: owner.account_id },
  });
  assert.is(status.plan_key, 'business', 'the owner sees the new plan');

  await h.api('PUT /v0/operator/apps/{app_id}/flags/{flag}', {
    key: first.api_key,
    params: { app_id: app.app_id, flag: 'takedown' },
    body: { reason: 'DMCA notice 7' },
  });
  assert.is((await h.call('GET', '/', { host })).status, 451, 'the app is taken down');
  const apps = await h.api('GET /v0/operator/accounts/{account_id}/apps', {
    key: first.api_key,
    params: { account_id: owner.account_id },
  });
  assert.equal(
    apps.apps.map((a) => a.flags.map((f) => [f.flag, f.reason])),
    [[['takedown', 'DMCA notice 7']]],
  );
  await h.api('DELETE /v0/operator/apps/{app_id}/flags/{flag}', {
    key: first.api_key,
    params: { app_id: app.app_id, flag: 'takedown' },
  });
  assert.is((await h.call('GET', '/', { host })).status, 200, 'the takedown is lifted');

  await h.api('PUT /v0/operator/accounts/{account_id}/flags/{flag}', {
    key: first.api_key,
    params: { account_id: owner.account_id, flag: 'suspended' },
    body: { reason: 'phishing report 42' },
  });
  const suspended = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
  assert.is(suspended.status, 403);
  assert.is(suspended.body.error.code, 'account_suspended');
  const noFlag = await h.answer('PUT /v0/operator/accounts/{account_id}/flags/{flag}', {
    key: first.api_key,
    params: { account_id: owner.account_id, flag: 'takedown' },
    body: { reason: 'x' },
  });
  assert.is(noFlag.status, 404, 'an account has no takedown flag');
  const noReason = await h.answer('PUT /v0/operator/accounts/{account_id}/flags/{flag}', {
    key: first.api_key,
    params: { account_id: owner.account_id, flag: 'suspended' },
    body: { reason: '  ' },
  });
  assert.is(noReason.status, 400);
  await h.api('DELETE /v0/operator/accounts/{account_id}/flags/{flag}', {
    key: first.api_key,
    params: { account_id: owner.account_id, flag: 'suspended' },
  });
  const after = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
  assert.ok(after.status < 300, `publishing again after the suspension is lifted: ${after.text}`);

  const billed = await h.api('PUT /v0/operator/accounts/{account_id}/billing-state', {
    key: first.api_key,
    params: { account_id: owner.account_id },
    body: { state: 'past_due_grace', grace_days: 3 },
  });
  assert.is(billed.billing_access_state, 'past_due_grace');
  const graced = await h.api('GET /v0/accounts/{account_id}/status', {
    key: owner.api_key,
    params: { account_id: owner.account_id },
  });
  assert.is(graced.billing_access_state, 'past_due_grace', 'the owner sees the grace period');
  assert.ok(Date.parse(graced.grace_ends_at!) - Date.now() > 2.9 * 86_400_000);

  const log = await h.api('GET /v0/operator/actions', { key: first.api_key });
  const mine = log.actions.filter(
    (a) => a.account_id === owner.account_id || a.app_id === app.app_id,
  );
  assert.equal(
    mine.map((a) => a.action),
    ['set_billing_state', 'clear_flag', 'set_flag', 'clear_flag', 'set_flag', 'set_plan'],
  );
  for (const a of mine) {
    assert.is(a.actor_user_id, first.user_id);
    assert.match(a.actor_label, /\(API key ap_/);
  }
  assert.is(mine[4]!.detail.reason, 'DMCA notice 7');
  assert.is(mine[5]!.detail.previous_plan_key, 'free');
});

test('admin grant-operator names an operator, revoke takes it back, both recorded', async () => {
  const granted = await admin('grant-operator', '--email', (await emailOf(other.user_id))!);
  assert.is(granted.code, 0, JSON.stringify(granted.json));
  assert.is(granted.json.operator, true);
  assert.is((await h.call('GET', '/v0/operator/health', { key: other.api_key })).status, 200);
  const listed = await admin('list-operators');
  assert.equal(
    listed.json.operators.map((o: { user_id: string }) => o.user_id).sort(),
    [first.user_id, other.user_id].sort(),
  );
  const revoked = await admin('revoke-operator', '--email', (await emailOf(other.user_id))!);
  assert.is(revoked.json.changed, true);
  assert.is((await h.call('GET', '/v0/operator/health', { key: other.api_key })).status, 403);
  const unknown = await admin('grant-operator', '--email', uniqueEmail('nobody'));
  assert.is(unknown.code, 1);
  assert.is(unknown.json.error.code, 'not_found');

  const byAdmin = await admin('set-plan', '--account', other.account_id, '--plan', 'starter');
  assert.is(byAdmin.code, 0);
  const log = await h.api('GET /v0/operator/actions', {
    key: first.api_key,
    query: { limit: '3' },
  });
  assert.equal(
    log.actions.map((a) => a.action),
    ['set_plan', 'revoke_operator', 'grant_operator'],
  );
  for (const a of log.actions) {
    assert.is(a.actor_user_id, null);
    assert.match(a.actor_label, /^admin command \(.+@.+\)$/);
  }
  assert.ok(log.cursor, 'there are older actions');
  const older = await h.api('GET /v0/operator/actions', {
    key: first.api_key,
    query: { limit: '3', cursor: log.cursor! },
  });
  assert.not.ok(
    older.actions.some((a) => log.actions.some((b) => b.id === a.id)),
    'pages do not overlap',
  );
});

test("the server's health names the job queue, the blobs and Postgres", async () => {
  const health = await h.api('GET /v0/operator/health', { key: first.api_key });
  assert.ok(health.postgres.database_bytes > 1_000_000);
  assert.match(health.postgres.version, /^\d+/);
  assert.is(health.blobs.store, 'postgres');
  const pg = health.blobs.by_location.find((b) => b.stored_in === 'postgres');
  assert.ok(pg && pg.count > 0 && pg.bytes > 0, 'published files are blobs in Postgres');
  for (const n of ['ready', 'scheduled', 'running', 'failed'] as const)
    assert.type(health.jobs[n], 'number');
});

test('a user created when others exist is never made operator, even with no operator left', async () => {
  await h.deps.db.deleteFrom('operators').execute();
  const later = await createUser(h.deps.db, { email: uniqueEmail('later') });
  assert.is((await h.call('GET', '/v0/operator/health', { key: later.api_key })).status, 403);
});

async function emailOf(userId: string) {
  return (
    await h.deps.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst()
  )?.email;
}

test.after(() => h.close());
test.run();
