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
  const r = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/STRIPE_KEY`, { key, body: { value } });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['created_at', 'name', 'present', 'updated_at']);
  assert.is(r.body.name, 'STRIPE_KEY');
  assert.is(r.body.present, true);
  const list = await h.call('GET', `/v0/apps/${app.app_id}/secrets`, { key });
  assert.is(list.body.app_id, app.app_id);
  assert.equal(list.body.secrets.map((s: any) => [s.name, s.present]), [['STRIPE_KEY', true]]);
  assert.not.match(list.text, value);
  const row = await h.deps.db.selectFrom('app_secrets').selectAll().where('app_id', '=', app.app_id).executeTakeFirstOrThrow();
  assert.not.ok(row.sealed.includes(Buffer.from(value)), 'no plaintext at rest');
  assert.is(open(h.deps.secretsKey, secretAad(app.app_id, 'STRIPE_KEY'), row.sealed), value);
  // Bound to its row: the same sealed bytes do not open as another secret.
  assert.throws(() => open(h.deps.secretsKey, secretAad(app.app_id, 'OTHER'), row.sealed));
  // Updating keeps created_at and moves updated_at.
  const again = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/STRIPE_KEY`, { key, body: { value: 'new' } });
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
    const r = await h.call('PUT', `/v0/apps/${app.app_id}/secrets/${name}`, { key, body: { value: 'v' } });
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
  await checkAuthMatrix(h, { method: 'GET', path: `/v0/apps/${app.app_id}/secrets` }, { ownerAccountId: u.account_id });
  await checkAuthMatrix(h, { method: 'PUT', path: `/v0/apps/${app.app_id}/secrets/X`, body: { value: 'v' } }, { ownerAccountId: u.account_id, deniedRoles: ['viewer'] });
  await checkAuthMatrix(h, { method: 'DELETE', path: `/v0/apps/${app.app_id}/secrets/X` }, { ownerAccountId: u.account_id, deniedRoles: ['viewer'] });
});

test('events: cursor pages through every event exactly once, newest first, even while new ones arrive', async () => {
  const a = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;
  for (let i = 0; i < 5; i++) await h.call('PUT', `/v0/apps/${a.app_id}/secrets/S${i}`, { key, body: { value: 'v' } });
  const all = (await h.call('GET', `/v0/apps/${a.app_id}/events`, { key })).body.events;
  assert.ok(all.length >= 7);
  const ids = all.map((e: any) => e.app_event_id);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: any = await h.call('GET', `/v0/apps/${a.app_id}/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key });
    assert.is(page.status, 200);
    assert.ok(page.body.events.length <= 2);
    seen.push(...page.body.events.map((e: any) => e.app_event_id));
    cursor = page.body.cursor;
    if (pages++ === 0) await h.call('PUT', `/v0/apps/${a.app_id}/secrets/LATE`, { key, body: { value: 'v' } });
  } while (cursor);
  assert.equal(seen, ids);
  const e = all[0];
  assert.equal(Object.keys(e).sort(), ['api_key_id', 'app_event_id', 'app_user_id', 'created_at', 'event_type', 'level', 'message', 'metadata', 'release_id', 'request_id', 'severity', 'type']);
  assert.is(e.type, e.event_type);
  assert.is(e.severity, e.level);
});

test('events: filters by type, severity and release_id; limit bounds', async () => {
  const a = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;
  await h.call('PUT', `/v0/apps/${a.app_id}/secrets/X`, { key, body: { value: 'v' } });
  await h.call('DELETE', `/v0/apps/${a.app_id}/secrets/X`, { key });
  const byType = await h.call('GET', `/v0/apps/${a.app_id}/events?type=secret.set`, { key });
  assert.ok(byType.body.events.every((e: any) => e.type === 'secret.set'));
  assert.is(byType.body.events.length, 1);
  const warn = await h.call('GET', `/v0/apps/${a.app_id}/events?severity=warn`, { key });
  assert.ok(warn.body.events.length >= 1);
  assert.ok(warn.body.events.every((e: any) => e.severity === 'warn'));
  const rel = await h.call('GET', `/v0/apps/${a.app_id}/events?release_id=${a.release_id}`, { key });
  assert.ok(rel.body.events.length >= 2);
  assert.ok(rel.body.events.every((e: any) => e.release_id === a.release_id));
  const prefix = await h.call('GET', `/v0/apps/${a.app_id}/events?type=secret`, { key });
  assert.is(prefix.body.events.length, 0, 'type matches exactly');
  const hundred = await h.call('GET', `/v0/apps/${a.app_id}/events?limit=100`, { key });
  assert.is(hundred.status, 200);
  for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'severity=fatal', 'release_id=r1', 'cursor=garbage', 'type=Bad Type', 'unknown=1', 'limit=1&limit=2']) {
    const r = await h.call('GET', `/v0/apps/${a.app_id}/events?${q}`, { key });
    assert.is(r.status, 400, q);
    assert.is(r.body.error.code, 'invalid_request', q);
  }
});

test('events: only members of the app account read them', async () => {
  await checkAuthMatrix(h, { method: 'GET', path: `/v0/apps/${app.app_id}/events` }, { ownerAccountId: u.account_id });
  const viewer = await newMember(h, u.account_id, 'viewer');
  const r = await h.call('GET', `/v0/apps/${app.app_id}/events`, { key: viewer.api_key });
  assert.is(r.status, 200);
});

test.after(() => h.close());
test.run();
