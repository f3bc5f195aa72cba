/**
 * The operator's side of plans: the plans file merged over the catalogue and checked at start-up,
 * and `npm run admin -- set-plan | flag | billing-state` from another process (the running
 * service's app origins pick flags up through the change feed, not a query per request).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { BUILT_IN_PLANS } from '../../src/plans/catalogue.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { waitFor } from '../_lib/apps.ts';
import { sql } from 'kysely';
import { setPlan } from '../../src/plans/operator.ts';
import { pruneEvents } from '../../worker/tasks/retention.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';

const run = promisify(execFile);
const url = process.env.TEST_DATABASE_URL!;

function plansFile(content: unknown): string {
  const f = path.join(tmpdir(), `plans-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content));
  return f;
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(env)}`);
}

test('the plans file is merged over the built-in catalogue', () => {
  const f = plansFile({
    starter: {
      display_name: 'Hobby',
      price_monthly_usd: 7,
      limits: { 'apps.max': 2 },
      features: { custom_domains: false },
    },
  });
  const plans = loadConfig({ PLATFORM_PLANS_FILE: f }).plans;
  assert.is(plans.starter.display_name, 'Hobby');
  assert.is(plans.starter.price_monthly_usd, 7);
  assert.is(plans.starter.limits['apps.max'], 2);
  assert.is(
    plans.starter.limits['requests.monthly.max'],
    BUILT_IN_PLANS.starter.limits['requests.monthly.max'],
    'what the file leaves out stays',
  );
  assert.is(plans.starter.features.custom_domains, false);
  assert.is(plans.starter.features.app_slugs, true);
  assert.equal(plans.business, BUILT_IN_PLANS.business);
  assert.equal(loadConfig({}).plans, BUILT_IN_PLANS);
});

test('a wrong plans file stops start-up with a message naming what is wrong', async () => {
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile({ gold: {} }) }),
    /gold: unknown key \(known: free, starter/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile({ free: { limits: { 'apps.maximum': 3 } } }) }),
    /free\.limits\.apps\.maximum: unknown key/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile({ free: { features: { teleport: true } } }) }),
    /free\.features\.teleport: unknown key/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile({ free: { limits: { 'apps.max': -1 } } }) }),
    /free\.limits\.apps\.max: must not be negative/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile({ free: { limits: { 'apps.max': 'ten' } } }) }),
    /free\.limits\.apps\.max/,
  );
  assert.match(
    configError({
      PLATFORM_PLANS_FILE: plansFile({ free: { limits: { 'release.file_count.max': 5000 } } }),
    }),
    /at most 1000/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: plansFile('{ not json') }),
    /PLATFORM_PLANS_FILE: cannot read/,
  );
  assert.match(
    configError({ PLATFORM_PLANS_FILE: '/nonexistent/plans.json' }),
    /PLATFORM_PLANS_FILE: cannot read/,
  );
  assert.match(configError({ PLATFORM_SANDBOX_CPU_MS: '100' }), /server\.cpu_ms\.max/);
  const started = await run(process.execPath, ['src/start.mjs'], {
    env: { ...process.env, PLATFORM_PLANS_FILE: plansFile({ platinum: {} }) },
  }).catch((e) => e);
  assert.is(started.code, 2);
  assert.match(started.stderr, /PLATFORM_PLANS_FILE.*platinum: unknown key/);
});

test('admin set-plan, flag and billing-state, from another process, reach a running service', async () => {
  const h = await createHarness({ PLATFORM_PLANS_FILE: '' });
  const env = { ...process.env, DATABASE_URL: url, PLATFORM_LOG_LEVEL: 'silent' };
  const admin = async (...args: string[]) => {
    const out = await run(process.execPath, [...ADMIN_ARGS, ...args], {
      env,
    }).catch((e) => e);
    return {
      code: (out.code as number | undefined) ?? 0,
      json: JSON.parse(String(out.stdout).trim().split('\n').pop()!),
    };
  };
  try {
    const u = await newUser(h);
    const app = (await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() })).body
      .app_id as string;
    const host = `${app}.apps.localhost`;
    assert.is((await h.call('GET', '/', { host })).status, 200);

    const upgraded = await admin('set-plan', '--account', u.account_id, '--plan', 'business');
    assert.is(upgraded.code, 0, JSON.stringify(upgraded.json));
    assert.is(upgraded.json.plan_key, 'business');
    assert.is(upgraded.json.previous_plan_key, 'free');
    const limits = await h.api('GET /v0/accounts/{account_id}/limits', {
      key: u.api_key,
      params: { account_id: u.account_id },
    });
    assert.is(limits.plan_key, 'business');
    const row = await h.deps.db
      .selectFrom('accounts')
      .select('entitlement_source')
      .where('id', '=', u.account_id)
      .executeTakeFirstOrThrow();
    assert.is(row.entitlement_source, 'manual');
    const unknown = await admin('set-plan', '--account', u.account_id, '--plan', 'gold');
    assert.is(unknown.code, 1);
    assert.match(unknown.json.error.message, /Unknown plan "gold"/);

    const flagged = await admin(
      'flag',
      '--app',
      app,
      '--set',
      'takedown',
      '--reason',
      'DMCA notice 9',
    );
    assert.is(flagged.code, 0, JSON.stringify(flagged.json));
    // the flag reaches the service's cache through the change feed
    const gone = await waitFor(async () => {
      const r = await h.call('GET', '/', { host });
      return r.status === 451 ? r : undefined;
    }, 5000);
    assert.is(gone.body.error.code, 'app_takedown');
    const noReason = await admin('flag', '--account', u.account_id, '--set', 'suspended');
    assert.is(noReason.code, 1);
    assert.match(noReason.json.error.message, /--reason/);
    assert.is((await admin('flag', '--app', app, '--clear', 'takedown')).json.cleared, true);
    await waitFor(async () => (await h.call('GET', '/', { host })).status === 200, 5000);

    const grace = await admin(
      'billing-state',
      '--account',
      u.account_id,
      '--state',
      'past_due_grace',
      '--grace-days',
      '3',
    );
    assert.is(grace.code, 0, JSON.stringify(grace.json));
    const status = await h.api('GET /v0/accounts/{account_id}/status', {
      key: u.api_key,
      params: { account_id: u.account_id },
    });
    assert.is(status.billing_access_state, 'past_due_grace');
    assert.is(status.grace_ends_at, grace.json.grace_ends_at);
  } finally {
    await h.close();
  }
});

test("event retention is the plan's events.retention_days, from the plans file too", async () => {
  const h = await createHarness({
    PLATFORM_PLANS_FILE: plansFile({ starter: { limits: { 'events.retention_days': 3 } } }),
  });
  try {
    const u = await newUser(h);
    await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
    const app = (await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() })).body
      .app_id as string;
    await sql`update app_events set created_at = now() - interval '2 days' where app_id = ${app} and type = 'release.created'`.execute(
      h.deps.db,
    );
    await sql`update app_events set created_at = now() - interval '4 days' where app_id = ${app} and type = 'release.activated'`.execute(
      h.deps.db,
    );
    await pruneEvents(h.deps);
    const left = (
      await h.api('GET /v0/apps/{app_id}/events', { key: u.api_key, params: { app_id: app } })
    ).events.map((e) => e.type);
    assert.ok(left.includes('release.created'), 'two days old: kept under a 3-day retention');
    assert.not.ok(left.includes('release.activated'), 'four days old: gone');
  } finally {
    await h.close();
  }
});

test.run();
