/**
 * The event log as a person searches it: free text over messages and metadata (NUL and LIKE
 * wildcards taken literally), this app's own types with counts, identical errors grouped with a
 * count and the latest occurrence, filters that combine.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { recordEvents } from '../../src/events/record.ts';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const app = await h.api('PUT /v0/apps', { key: owner.api_key, body: site() as never });
const base = { app_id: app.app_id, account_id: owner.account_id, release_id: app.release_id };
await recordEvents(h.deps.db, [
  ...Array.from({ length: 5 }, () => ({
    ...base,
    type: 'runtime.request_error',
    severity: 'error' as const,
    message: 'TypeError: cannot read properties of undefined',
    metadata: { path: '/checkout', stack: 'TypeError: x\n    at handler (src/cart.ts:12:7)' },
  })),
  {
    ...base,
    type: 'runtime.request_error',
    severity: 'error',
    message: 'RangeError: bad length',
    metadata: { path: '/a' },
  },
  {
    ...base,
    type: 'runtime.log',
    severity: 'info',
    message: 'order 100% paid',
    metadata: { order: 'ord_77' },
  },
]);
const params = { app_id: app.app_id };

test('free text finds messages and metadata, literally', async () => {
  const byMeta = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params,
    query: { q: 'ORD_77' } as never,
  });
  assert.equal(
    byMeta.events.map((e) => e.message),
    ['order 100% paid'],
  );
  const byMessage = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params,
    query: { q: 'rangeerror' } as never,
  });
  assert.is(byMessage.events.length, 1);
  const percent = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params,
    query: { q: '100%' } as never,
  });
  assert.equal(
    percent.events.map((e) => e.message),
    ['order 100% paid'],
    '% is a character, not a wildcard',
  );
  const none = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params,
    query: { q: '1_0', type: 'runtime.log' } as never,
  });
  assert.equal(none.events, [], '_ is a character too');
  const combined = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params,
    query: { q: 'checkout', severity: 'error' } as never,
  });
  assert.is(combined.events.length, 5);
  const nul = await h.call('GET', `/v0/apps/${app.app_id}/events?q=%00`, { key: owner.api_key });
  assert.is(nul.status, 400);
});

test("the app's own types, with counts", async () => {
  const t = await h.api('GET /v0/apps/{app_id}/event-types', { key: owner.api_key, params });
  const counts = Object.fromEntries(t.types.map((x) => [x.type, x.count]));
  assert.is(counts['runtime.request_error'], 6);
  assert.is(counts['runtime.log'], 1);
  assert.ok((counts['release.created'] ?? 0) >= 1, 'the publish is in the log too');
});

test('identical errors grouped with a count and the latest occurrence in full', async () => {
  const g = await h.api('GET /v0/apps/{app_id}/event-groups', {
    key: owner.api_key,
    params,
    query: { severity: 'error' },
  });
  assert.equal(g.groups.map((x) => [x.count, x.message]).sort(), [
    [1, 'RangeError: bad length'],
    [5, 'TypeError: cannot read properties of undefined'],
  ]);
  const logs = await h.api('GET /v0/apps/{app_id}/event-groups', {
    key: owner.api_key,
    params,
    query: { type: 'runtime.log' },
  });
  assert.equal(
    logs.groups.map((x) => x.type),
    ['runtime.log'],
    'the type filter applies to groups',
  );
  const typeError = g.groups.find((x) => x.count === 5)!;
  assert.match(String(typeError.last.metadata.stack), 'src/cart.ts:12:7');
  assert.is(typeError.last.release_id, app.release_id);
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.app_id}/event-groups` },
    { ownerAccountId: owner.account_id },
  );
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.app_id}/event-types` },
    { ownerAccountId: owner.account_id },
  );
});

test.after(() => h.close());
test.run();
