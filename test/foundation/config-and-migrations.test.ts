import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { ADMIN_ARGS, npmScriptArgs } from '../_lib/processes.ts';

const run = promisify(execFile);
const url = process.env.TEST_DATABASE_URL!;

test('config: defaults, and a bad value names the variable', () => {
  const c = loadConfig({});
  assert.is(c.port, 8787);
  assert.is(c.dataDir, './.data');
  assert.is(c.hosts.api, 'api.localhost');
  assert.is(c.role, 'all');
  assert.ok(Object.isFrozen(c));
  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PLATFORM_ROLE', 'both'],
    ['DATABASE_URL', 'mysql://x'],
    ['PLATFORM_SECRETS_KEY', 'short'],
    ['PLATFORM_APPS_HOST', 'bad host'],
  ]) {
    try {
      loadConfig({ [name!]: value });
      assert.unreachable(`${name}=${value} accepted`);
    } catch (err) {
      assert.instance(err, ConfigError);
      assert.match((err as Error).message, name!);
    }
  }
});

test('npm start refuses a bad variable with a message naming it', async () => {
  const err = await run(process.execPath, ['src/start.mjs'], {
    env: { ...process.env, PORT: 'abc' },
  }).catch((e) => e);
  assert.is(err.code, 2);
  assert.match(err.stderr, 'PORT');
});

test('migrations are recorded once; re-running is a no-op', async () => {
  const applied = await migrate(url);
  assert.equal(applied, [], 'template already migrated');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query('select id from platform_migrations order by id');
  const files = await readMigrations();
  assert.equal(
    rows.map((r) => r.id),
    files.map((f) => f.id),
  );
  await c.end();
});

test('concurrent migrators on an empty database do not collide: one applies everything, the others nothing (advisory lock)', async () => {
  const name = `migrate_race_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  try {
    const fresh = new URL(url);
    fresh.pathname = `/${name}`;
    const results = await Promise.all([1, 2, 3, 4].map(() => migrate(fresh.toString())));
    const all = (await readMigrations()).map((m) => m.id);
    assert.equal(
      results.filter((r) => r.length).length,
      1,
      'exactly one migrator applied anything',
    );
    assert.equal(
      results.find((r) => r.length),
      all,
      'and it applied every migration, once',
    );
    const c = new pg.Client({ connectionString: fresh.toString() });
    await c.connect();
    const { rows } = await c.query('select id from platform_migrations order by id');
    await c.end();
    assert.equal(
      rows.map((r) => r.id),
      all,
    );
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});

test('npm run migrate applies pending migrations and prints them (none left on a migrated database)', async () => {
  const out = await run(process.execPath, npmScriptArgs('migrate'), {
    env: { ...process.env, DATABASE_URL: url, PLATFORM_LOG_LEVEL: 'silent' },
  });
  assert.equal(JSON.parse(out.stdout.trim()), { applied: [] });
});

test('an edited landed migration stops start-up', async () => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`update platform_migrations set checksum = 'edited' where id = '000001_identity'`);
  await c.end();
  try {
    await migrate(url);
    assert.unreachable('edited migration accepted');
  } catch (err) {
    assert.match((err as Error).message, '000001_identity was edited');
  } finally {
    const fix = new pg.Client({ connectionString: url });
    await fix.connect();
    const files = await readMigrations();
    await fix.query('update platform_migrations set checksum = $1 where id = $2', [
      files[0]!.checksum,
      files[0]!.id,
    ]);
    await fix.end();
  }
});

test('admin command: create-user and add-member print one JSON object; the key works', async () => {
  const env = { ...process.env, DATABASE_URL: url, PLATFORM_LOG_LEVEL: 'silent' };
  const email = `admin-${process.pid}@example.com`;
  const out = await run(
    process.execPath,
    [...ADMIN_ARGS, 'create-user', '--email', email, '--username', `op-${process.pid}`],
    { env },
  );
  const created = JSON.parse(out.stdout.trim().split('\n').pop()!);
  assert.match(created.user_id, /^usr_/);
  assert.match(created.account_id, /^acct_/);
  assert.match(created.api_key, /^ap_/);
  const again = await run(
    process.execPath,
    [...ADMIN_ARGS, 'create-user', '--email', email.toUpperCase()],
    { env },
  ).catch((e) => e);
  assert.is(again.code, 1);
  assert.is(JSON.parse(again.stdout.trim()).error.code, 'email_already_registered');
  const member = await run(
    process.execPath,
    [
      ...ADMIN_ARGS,
      'add-member',
      '--account',
      created.account_id,
      '--email',
      `viewer-${process.pid}@example.com`,
      '--role',
      'viewer',
    ],
    { env },
  );
  const added = JSON.parse(member.stdout.trim().split('\n').pop()!);
  assert.is(added.account_id, created.account_id);
  const { createHarness } = await import('../_lib/harness.ts');
  const h = await createHarness();
  const accounts = await h.api('GET /v0/accounts', { key: added.api_key });
  assert.ok(accounts.accounts.some((a) => a.id === created.account_id && a.role === 'viewer'));
  await h.close();
  const badRole = await run(
    process.execPath,
    [
      ...ADMIN_ARGS,
      'add-member',
      '--account',
      created.account_id,
      '--email',
      'x@example.com',
      '--role',
      'god',
    ],
    { env },
  ).catch((e) => e);
  assert.is.not(badRole.code, 0);
  assert.match(badRole.stdout, 'role');
  const missing = await run(process.execPath, [...ADMIN_ARGS, 'create-user'], { env }).catch(
    (e) => e,
  );
  assert.is(missing.code, 2);
  assert.match(missing.stdout, '--email is required');
});

test.run();
