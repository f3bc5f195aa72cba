/**
 * What two nodes on one Postgres must agree on besides caches (test/cluster/routes-across-nodes.test.ts,
 * test/plans/monthly-requests.test.ts): abuse limits count attempts on every node together; an app
 * user's session made on one node works on the other and ends on both at logout; an API key revoked
 * on one node is refused by the other at once.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

// two server instances (own pools, caches and signals) on this file's database
const a = await createHarness();
const b = await createHarness();
const u = await newUser(a);
const cookieOf = (r: { headers: Headers }) => r.headers.get('set-cookie')?.split(';')[0] ?? '';

async function appUsersApp(): Promise<string> {
  const r = await a.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({ resources: { auth: { mode: 'app_users', public_signup: true } } }),
  });
  assert.is(r.status, 200, r.text);
  return `${r.body.app_id}.apps.localhost`;
}

test('the app-user login limit counts attempts on both nodes together (429 at the 11th, on either node)', async () => {
  const host = await appUsersApp();
  assert.is(
    (
      await a.call('POST', '/_platform/auth/signup', {
        host,
        body: { email: 'lim@example.com', password: 'correct horse battery' },
      })
    ).status,
    201,
  );
  for (let i = 1; i <= 10; i++) {
    const node = i % 2 ? a : b;
    const r = await node.call('POST', '/_platform/auth/login', {
      host,
      body: { email: 'lim@example.com', password: `wrong password ${i}` },
    });
    assert.is(r.status, 401, `attempt ${i} on node ${i % 2 ? 'A' : 'B'}`);
  }
  for (const node of [a, b]) {
    const r = await node.call('POST', '/_platform/auth/login', {
      host,
      body: { email: 'lim@example.com', password: 'correct horse battery' },
    });
    assert.is(r.status, 429, 'the 11th attempt, on either node, even with the right password');
    assert.ok(Number(r.headers.get('retry-after')) > 0);
  }
});

test("an app user's session made on node A works on node B, and logout on A ends it on B", async () => {
  const host = await appUsersApp();
  const signup = await a.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'sess@example.com', password: 'correct horse battery' },
  });
  const cookie = cookieOf(signup);
  const onB = await b.call('GET', '/_platform/auth/session', { host, headers: { cookie } });
  assert.is(onB.status, 200);
  assert.is(onB.body.user.email, 'sess@example.com');
  const out = await a.call('POST', '/_platform/auth/logout', {
    host,
    headers: { cookie, origin: `http://${host}` },
  });
  assert.is(out.status, 200);
  assert.is(
    (await b.call('GET', '/_platform/auth/session', { host, headers: { cookie } })).status,
    401,
    'node B no longer accepts it',
  );
  assert.is(
    (await a.call('GET', '/_platform/auth/session', { host, headers: { cookie } })).status,
    401,
  );
});

test('an API key revoked on node A is refused by node B at once', async () => {
  const v = await newUser(a);
  assert.is(
    (await b.call('GET', '/v0/apps', { key: v.api_key })).status,
    200,
    'node B knows the key (and may cache it)',
  );
  const keys = await a.call('GET', '/v0/auth/api-keys', { key: v.api_key });
  assert.is(
    (await a.call('DELETE', `/v0/auth/api-keys/${keys.body.api_keys[0].id}`, { key: v.api_key }))
      .status,
    200,
  );
  const refused = await b.call('GET', '/v0/apps', { key: v.api_key });
  assert.is(refused.status, 401);
});

test.after(async () => {
  await a.close();
  await b.close();
});
test.run();
