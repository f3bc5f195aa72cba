/** The event log over the API: cursor paging, filters, who may read it. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { site } from '../_lib/bundles.ts';
import type { EventPage } from '../../src/events/schemas.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;
const app = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;

test('events: cursor pages through every event exactly once, newest first, even while new ones arrive', async () => {
  const a = await h.api('PUT /v0/apps', { key, body: site() });
  const params = { app_id: a.app_id };
  for (let i = 0; i < 5; i++)
    await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
      key,
      params: { ...params, name: `S${i}` },
      body: { value: 'v' },
    });
  const all = (await h.api('GET /v0/apps/{app_id}/events', { key, params })).events;
  assert.ok(all.length >= 7);
  const ids = all.map((e) => e.app_event_id);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: EventPage = await h.api('GET /v0/apps/{app_id}/events', {
      key,
      params,
      query: { limit: '2', cursor: cursor ?? undefined },
    });
    assert.ok(page.events.length <= 2);
    seen.push(...page.events.map((e) => e.app_event_id));
    cursor = page.cursor;
    if (pages++ === 0)
      await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
        key,
        params: { ...params, name: 'LATE' },
        body: { value: 'v' },
      });
  } while (cursor);
  assert.equal(seen, ids);
  const e = all[0]!;
  assert.equal(Object.keys(e).sort(), [
    'api_key_id',
    'app_event_id',
    'app_user_id',
    'created_at',
    'event_type',
    'level',
    'message',
    'metadata',
    'release_id',
    'request_id',
    'severity',
    'type',
  ]);
  assert.is(e.type, e.event_type);
  assert.is(e.severity, e.level);
});

test('events: filters by type, severity and release_id; limit bounds', async () => {
  const a = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;
  await h.call('PUT', `/v0/apps/${a.app_id}/secrets/X`, { key, body: { value: 'v' } });
  await h.call('DELETE', `/v0/apps/${a.app_id}/secrets/X`, { key });
  const list = (query: { type?: string; severity?: 'warn'; release_id?: string }) =>
    h.api('GET /v0/apps/{app_id}/events', { key, params: { app_id: a.app_id }, query });
  const byType = await list({ type: 'secret.set' });
  assert.ok(byType.events.every((e) => e.type === 'secret.set'));
  assert.is(byType.events.length, 1);
  const warn = await list({ severity: 'warn' });
  assert.ok(warn.events.length >= 1);
  assert.ok(warn.events.every((e) => e.severity === 'warn'));
  const rel = await list({ release_id: a.release_id });
  assert.ok(rel.events.length >= 2);
  assert.ok(rel.events.every((e) => e.release_id === a.release_id));
  const prefix = await h.call('GET', `/v0/apps/${a.app_id}/events?type=secret`, { key });
  assert.is(prefix.body.events.length, 0, 'type matches exactly');
  const hundred = await h.call('GET', `/v0/apps/${a.app_id}/events?limit=100`, { key });
  assert.is(hundred.status, 200);
  for (const q of [
    'limit=0',
    'limit=101',
    'limit=abc',
    'limit=1.5',
    'severity=fatal',
    'release_id=r1',
    'cursor=garbage',
    'type=Bad Type',
    'unknown=1',
    'limit=1&limit=2',
  ]) {
    const r = await h.call('GET', `/v0/apps/${a.app_id}/events?${q}`, { key });
    assert.is(r.status, 400, q);
    assert.is(r.body.error.code, 'invalid_request', q);
  }
});

test('events: only members of the app account read them', async () => {
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.app_id}/events` },
    { ownerAccountId: u.account_id },
  );
  const viewer = await newMember(h, u.account_id, 'viewer');
  const r = await h.call('GET', `/v0/apps/${app.app_id}/events`, { key: viewer.api_key });
  assert.is(r.status, 200);
});

test.after(() => h.close());
test.run();
