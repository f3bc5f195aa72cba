/** App secrets over the API: set, list (names only), delete, validation, roles. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';
import { open, secretAad } from '../../src/secrets/crypto.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;
const app = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;

test('secrets: set returns the summary only; list never shows values; stored encrypted', async () => {
  const value = 'sk_live_supersecret_value_123';
  const r = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/STRIPE_KEY`, {
    key,
    body: { value },
  });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['created_at', 'name', 'present', 'updated_at']);
  assert.is(r.body.name, 'STRIPE_KEY');
  assert.is(r.body.present, true);
  const list = await h.call('GET', `/v0/apps/${app.app_id}/secrets`, { key });
  assert.is(list.body.app_id, app.app_id);
  assert.equal(
    list.body.secrets.map((s: { name: string; present: boolean }) => [s.name, s.present]),
    [['STRIPE_KEY', true]],
  );
  assert.not.match(list.text, value);
  const row = await h.deps.db
    .selectFrom('app_secrets')
    .selectAll()
    .where('app_id', '=', app.app_id)
    .executeTakeFirstOrThrow();
  assert.not.ok(row.sealed.includes(Buffer.from(value)), 'no plaintext at rest');
  assert.is(open(h.deps.secretsKey, secretAad(app.app_id, 'STRIPE_KEY'), row.sealed), value);
  // Bound to its row: the same sealed bytes do not open as another secret.
  assert.throws(() => open(h.deps.secretsKey, secretAad(app.app_id, 'OTHER'), row.sealed));
  // Updating keeps created_at and moves updated_at.
  const again = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/STRIPE_KEY`, {
    key,
    body: { value: 'new' },
  });
  assert.is(again.body.created_at, r.body.created_at);
  const evs = await h.call('GET', `/v0/apps/${app.app_id}/events?type=secret.set`, { key });
  assert.is(evs.body.events.length, 2);
  assert.equal(evs.body.events[0].metadata, { name: 'STRIPE_KEY' });
  assert.not.match(evs.text, value);
});

test('secrets: delete is idempotent and records secret.deleted once', async () => {
  await h.call('PUT', `/v0/apps/${app.app_id}/secrets/TEMP`, { key, body: { value: 'v' } });
  const d1 = await h.call('DELETE', `/v0/apps/${app.app_id}/secrets/TEMP`, { key });
  assert.is(d1.status, 200);
  assert.equal(d1.body, { app_id: app.app_id, name: 'TEMP', deleted: true, present: false });
  const d2 = await h.call('DELETE', `/v0/apps/${app.app_id}/secrets/TEMP`, { key });
  assert.is(d2.body.deleted, false);
  const evs = await h.call('GET', `/v0/apps/${app.app_id}/events?type=secret.deleted`, { key });
  assert.is(evs.body.events.length, 1);
});

test('secrets: bad names and bodies are 400', async () => {
  for (const name of ['lower', 'PLATFORM_X', 'AWS_X', '1ABC', 'A'.repeat(65)]) {
    const r = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/${name}`, {
      key,
      body: { value: 'v' },
    });
    assert.is(r.status, 400, name);
  }
  for (const body of [{}, { value: 5 }, { value: 'x', other: 1 }, { value: 'x'.repeat(65_537) }]) {
    const r = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/OK_NAME`, { key, body });
    assert.is(r.status, 400, JSON.stringify(body).slice(0, 40));
  }
});

test('secrets: viewers may list names but not write; auth matrix', async () => {
  const viewer = await newMember(h, u.account_id, 'viewer');
  const list = await h.call('GET', `/v0/apps/${app.app_id}/secrets`, { key: viewer.api_key });
  assert.is(list.status, 200);
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.app_id}/secrets` },
    { ownerAccountId: u.account_id },
  );
  await checkAuthMatrix(
    h,
    { method: 'PUT', path: `/v0/apps/${app.app_id}/secrets/X`, body: { value: 'v' } },
    { ownerAccountId: u.account_id, deniedRoles: ['viewer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'DELETE', path: `/v0/apps/${app.app_id}/secrets/X` },
    { ownerAccountId: u.account_id, deniedRoles: ['viewer'] },
  );
});

test.after(() => h.close());
test.run();
