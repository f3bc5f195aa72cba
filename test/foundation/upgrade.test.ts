/**
 * Upgrading keeps working: a database made by the oldest migrations, with a live app written at
 * each stage as that stage's schema held it, migrates up to today and this version serves every
 * app, lists them with the old API key, publishes over them and rolls back. Migrations only add
 * (what lets nodes be upgraded one at a time: docs/guides/09-self-hosting.md).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateApiKey } from '../../src/api-keys/keys.ts';
import { prepareDatabase } from '../../src/boot.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, type Harness } from '../_lib/harness.ts';

const base = new URL(process.env.TEST_DATABASE_URL!);
const name = `upgrade_${process.pid}`;
const url = Object.assign(new URL(base.href), { pathname: `/${name}` }).href;

async function sql(connection: string, text: string, values: unknown[] = []) {
  const c = new pg.Client({ connectionString: connection });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

const key = generateApiKey();
const stages = [
  '000002_apps_releases',
  '000008_app_files',
  '000016_domains',
  '000024_node_heartbeats',
];
const apps: { id: string; html: string }[] = [];

/** A live static app as every stage's schema holds one (only the columns 000002 made). */
async function writeApp(stage: number) {
  const id = `stage${stage}app0000000`.slice(0, 16);
  const release = `rel_stage${stage}000000000000000`;
  const html = `<h1>made at stage ${stage}</h1>`;
  const bytes = Buffer.from(html);
  const sha = createHash('sha256').update(bytes).digest();
  const manifest = {
    app: { name: `Stage ${stage}` },
    runtime: { static_root: 'public' },
    resources: {},
  };
  await sql(url, 'insert into apps (id, account_id, name) values ($1, $2, $3)', [
    id,
    'acct_upgrade',
    `Stage ${stage}`,
  ]);
  await sql(
    url,
    'insert into blobs (account_id, sha256, size, data) values ($1, $2, $3, $4) on conflict do nothing',
    ['acct_upgrade', sha, bytes.length, bytes],
  );
  await sql(
    url,
    `insert into releases (id, app_id, seq, manifest, activation_status, activated_at, created_by_api_key_id, created_by_key_prefix)
     values ($1, $2, 1, $3, 'live', now(), 'key_upgrade', $4)`,
    [release, id, JSON.stringify(manifest), key.prefix],
  );
  await sql(
    url,
    'insert into release_files (release_id, path, content_type, sha256, size) values ($1, $2, $3, $4, $5)',
    [release, 'public/index.html', 'text/html; charset=utf-8', sha, bytes.length],
  );
  await sql(url, 'update apps set live_release_id = $1 where id = $2', [release, id]);
  apps.push({ id, html });
}

let h: Harness | undefined;

test('a database from the first migrations, with an app from each stage, upgrades and serves', async () => {
  await sql(base.href, `create database ${name}`);
  for (const [i, stage] of stages.entries()) {
    await migrate(url, { upTo: stage });
    if (i === 0) {
      // a user and their account reference each other: one transaction (the user's key is deferred)
      await sql(
        url,
        `begin;
         insert into users (id, email, default_account_id) values ('usr_upgrade', 'old@example.com', 'acct_upgrade');
         insert into accounts (id, name, owner_user_id) values ('acct_upgrade', 'Old', 'usr_upgrade');
         insert into memberships (account_id, user_id, role) values ('acct_upgrade', 'usr_upgrade', 'owner');
         commit;`,
      );
      await sql(
        url,
        "insert into api_keys (id, user_id, name, key_prefix, key_hash) values ('key_upgrade', 'usr_upgrade', 'old key', $1, $2)",
        [key.prefix, key.hash],
      );
    }
    await writeApp(i + 1);
  }
  await prepareDatabase(url);
  h = await createHarness({ DATABASE_URL: url });

  for (const a of apps) {
    const r = await h.call('GET', '/', { host: `${a.id}.apps.localhost` });
    assert.is(r.status, 200, `${a.id}: ${r.text}`);
    assert.is(r.text, a.html);
  }
  const listed = await h.api('GET /v0/apps', { key: key.raw });
  assert.equal(listed.apps.map((a) => a.app_id).sort(), apps.map((a) => a.id).sort());
  const first = apps[0]!;
  const published = await h.api('PUT /v0/apps/{app_id}', {
    key: key.raw,
    params: { app_id: first.id },
    body: site() as never,
  });
  assert.is(published.app_id, first.id);
  assert.is(
    (await h.call('GET', '/', { host: `${first.id}.apps.localhost` })).text,
    '<h1>Hello</h1>',
  );
  const releases = await h.api('GET /v0/apps/{app_id}/releases', {
    key: key.raw,
    params: { app_id: first.id },
  });
  assert.is(releases.releases.length, 2);
  assert.ok(releases.releases.some((r) => r.release_id === 'rel_stage1000000000000000'));
  await h.api('POST /v0/apps/{app_id}/rollback', {
    key: key.raw,
    params: { app_id: first.id },
    body: { release_id: 'rel_stage1000000000000000' } as never,
  });
  assert.is((await h.call('GET', '/', { host: `${first.id}.apps.localhost` })).text, first.html);
});

test('migrations only add: no table or column is dropped, renamed or retyped', async () => {
  // what an older node still running beside a newer one needs to find (three loosening steps
  // excepted; an R2 object stored in pieces is unreadable to a node older than 000036 until it upgrades)
  const allowed = new Set([
    'sql/000016_domains.sql: drop index app_routes_hostname_key;',
    'sql/000020_blob_store.sql: alter table blobs alter column data drop not null;',
    'sql/000036_r2_pieces.sql: alter table r2_objects alter column sha256 drop not null;',
  ]);
  for (const m of await readMigrations()) {
    const text = readFileSync(`sql/${m.id}.sql`, 'utf8');
    for (const line of text.split('\n')) {
      if (line.trim().startsWith('--')) continue;
      if (/\b(drop|rename)\b|alter column \S+ (set data )?type\b|set not null/i.test(line))
        assert.ok(
          allowed.has(`sql/${m.id}.sql: ${line.trim()}`),
          `sql/${m.id}.sql takes away: ${line.trim()}`,
        );
    }
  }
});

test.after(async () => {
  await h?.close();
  await sql(base.href, `drop database if exists ${name} with (force)`);
});
test.run();
