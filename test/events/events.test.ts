/** The event log over the API: cursor paging, filters, who may read it. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;
const app = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;

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
