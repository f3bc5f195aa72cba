import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import type { ApiKeyList } from '../../src/api-keys/schemas.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();

test('GET /v0/accounts lists memberships with roles and the default account', async () => {
  const alice = await newUser(h, 'alice');
  const bob = await newUser(h, 'bob');
  const asDev = await h.call('GET', '/v0/accounts', { key: alice.api_key });
  assert.is(asDev.status, 200);
  assert.equal(asDev.body.default_account_id, alice.account_id);
  assert.equal(asDev.body.accounts, [
    {
      id: alice.account_id,
      account_id: alice.account_id,
      name: asDev.body.accounts[0].name,
      owner_user_id: alice.user_id,
      role: 'owner',
    },
  ]);
  // Bob joins Alice's account as a developer: he sees both, his own stays default.
  const again = await newMember(h, alice.account_id, 'developer');
  const joined = await h.api('GET /v0/accounts', { key: again.api_key });
  assert.is(joined.accounts.length, 2);
  assert.ok(joined.accounts.some((a) => a.id === alice.account_id && a.role === 'developer'));
  assert.is.not(joined.default_account_id, alice.account_id);
  const bobs = await h.api('GET /v0/accounts', { key: bob.api_key });
  assert.not.ok(
    bobs.accounts.some((a) => a.id === alice.account_id),
    'no other account leaks',
  );
});

test('GET /v0/accounts auth matrix', async () => {
  await checkAuthMatrix(h, { method: 'GET', path: '/v0/accounts' });
});

test('API keys: create returns the raw key once; list, rename and revoke never do', async () => {
  const u = await newUser(h);
  const created = await h.call('POST', '/v0/auth/api-keys', {
    key: u.api_key,
    body: { name: '  laptop  ' },
  });
  assert.is(created.status, 201);
  assert.match(created.body.api_key, /^ap_[A-Za-z0-9_-]{43}$/);
  assert.is(created.body.name, 'laptop');
  assert.is(created.body.id, created.body.api_key_id);
  assert.ok(created.body.api_key.startsWith(created.body.key_prefix));
  assert.equal(Object.keys(created.body).sort(), [
    'api_key',
    'api_key_id',
    'created_at',
    'id',
    'key_prefix',
    'last_used_at',
    'name',
    'revoked_at',
  ]);
  // The new key works.
  const me = await h.call('GET', '/v0/accounts', { key: created.body.api_key });
  assert.is(me.status, 200);

  const list = await h.call('GET', '/v0/auth/api-keys', { key: u.api_key });
  assert.is(list.status, 200);
  assert.is(list.body.api_keys.length, 2);
  assert.not.match(list.text, created.body.api_key);
  assert.not.match(list.text, u.api_key);
  assert.not.match(list.text, 'hash');
  const used = (list.body as ApiKeyList).api_keys.find((k) => k.id === created.body.id);
  assert.ok(used?.last_used_at, 'last_used_at is recorded');

  const renamed = await h.call('PATCH', `/v0/auth/api-keys/${created.body.id}`, {
    key: u.api_key,
    body: { name: ' ci ' },
  });
  assert.is(renamed.status, 200);
  assert.is(renamed.body.name, 'ci');
  assert.is(renamed.body.api_key, undefined);

  const first = await h.call('DELETE', `/v0/auth/api-keys/${created.body.id}`, { key: u.api_key });
  assert.is(first.status, 200);
  assert.is(first.body.revoked, true);
  assert.ok(first.body.revoked_at);
  assert.is(first.body.api_key, undefined);
  const second = await h.call('DELETE', `/v0/auth/api-keys/${created.body.id}`, { key: u.api_key });
  assert.is(second.status, 200);
  assert.is(second.body.revoked, false);
  assert.is(second.body.revoked_at, first.body.revoked_at);
  const after = await h.call('GET', '/v0/accounts', { key: created.body.api_key });
  assert.is(after.status, 401);
});

test('API keys: a key can be created with no body and gets a default name', async () => {
  const u = await newUser(h);
  const r = await h.call('POST', '/v0/auth/api-keys', { key: u.api_key });
  assert.is(r.status, 201);
  assert.is(r.body.name, 'API key');
});

test('API keys: bad names, unknown ids and other users keys', async () => {
  const u = await newUser(h);
  const other = await newUser(h);
  for (const name of ['', '   ', 'x'.repeat(121), 5]) {
    const r = await h.call('POST', '/v0/auth/api-keys', { key: u.api_key, body: { name } });
    assert.is(r.status, 400, JSON.stringify(name));
    assert.ok(r.body.error.details.fields.name);
  }
  const ok120 = await h.call('POST', '/v0/auth/api-keys', {
    key: u.api_key,
    body: { name: ` ${'y'.repeat(120)} ` },
  });
  assert.is(ok120.status, 201);
  const missing = await h.call('PATCH', '/v0/auth/api-keys/key_00000000000000000000', {
    key: u.api_key,
    body: { name: 'x' },
  });
  assert.is(missing.status, 404);
  const garbage = await h.call('DELETE', '/v0/auth/api-keys/../../accounts', { key: u.api_key });
  assert.is(garbage.status, 404);
  const theirs = (await h.call('GET', '/v0/auth/api-keys', { key: other.api_key })).body.api_keys[0]
    .id;
  const steal = await h.call('DELETE', `/v0/auth/api-keys/${theirs}`, { key: u.api_key });
  assert.is(steal.status, 404);
  const stillWorks = await h.call('GET', '/v0/accounts', { key: other.api_key });
  assert.is(stillWorks.status, 200);
  const renameMissingName = await h.call('PATCH', `/v0/auth/api-keys/${theirs}`, {
    key: other.api_key,
    body: {},
  });
  assert.is(renameMissingName.status, 400);
});

test('API key routes auth matrix', async () => {
  await checkAuthMatrix(h, { method: 'GET', path: '/v0/auth/api-keys' });
  await checkAuthMatrix(h, { method: 'POST', path: '/v0/auth/api-keys', body: { name: 'x' } });
  await checkAuthMatrix(h, {
    method: 'PATCH',
    path: '/v0/auth/api-keys/key_00000000000000000000',
    body: { name: 'x' },
  });
  await checkAuthMatrix(h, {
    method: 'DELETE',
    path: '/v0/auth/api-keys/key_00000000000000000000',
  });
});

test('API keys: at most 100 live keys a user; the list comes in pages of 100 with a cursor', async () => {
  const u = await newUser(h); // holds one key already
  const create = (i: number) =>
    h.call('POST', '/v0/auth/api-keys', { key: u.api_key, body: { name: `bulk ${i}` } });
  for (let i = 1; i < 100; i++) assert.is((await create(i)).status, 201, `key ${i + 1}`);
  const over = await create(100);
  assert.is(over.status, 409);
  assert.is(over.body.error.code, 'conflict');
  assert.equal(over.body.error.details, { live_keys: 100, limit: 100 });
  assert.match(over.body.error.message, 'Revoke keys you no longer use');
  // ten at once do not slip past the bound together
  const first = await h.call('GET', '/v0/auth/api-keys', { key: u.api_key });
  assert.is(first.body.api_keys.length, 100);
  assert.is(first.body.cursor, null, 'one page holds them all');
  const victims = first.body.api_keys.slice(0, 3).map((k: { id: string }) => k.id);
  for (const id of victims)
    assert.is((await h.call('DELETE', `/v0/auth/api-keys/${id}`, { key: u.api_key })).status, 200);
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => create(200 + i)));
  assert.equal(
    burst.map((r) => r.status).sort(),
    [...Array(3).fill(201), ...Array(7).fill(409)],
    'exactly the room left',
  );
  // 103 keys now (100 live, 3 revoked): two pages, newest first, nothing twice or missed
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { status: number; body: ApiKeyList } = await h.call(
      'GET',
      `/v0/auth/api-keys?limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key: u.api_key },
    );
    assert.is(page.status, 200);
    seen.push(...page.body.api_keys.map((k) => k.id));
    cursor = page.body.cursor;
    pages++;
  } while (cursor);
  assert.is(pages, 3);
  assert.is(seen.length, 103);
  assert.is(new Set(seen).size, 103);
  const bad = await h.call('GET', '/v0/auth/api-keys?cursor=nonsense', { key: u.api_key });
  assert.is(bad.status, 400);
});

test('legacy password routes answer 410 with their codes', async () => {
  const cases: [string, string, string?][] = [
    ['/v0/accounts', 'password_signup_disabled'],
    ['/v0/auth/token', 'password_auth_disabled'],
    ['/v0/auth/password-reset/request', 'password_auth_disabled'],
    ['/v0/auth/password-reset/confirm', 'password_auth_disabled'],
    ['/v0/platform/sessions', 'password_auth_disabled', 'console.localhost'],
  ];
  for (const [path, code, host] of cases) {
    const r = await h.call('POST', path, { body: { username: 'a', password: 'b' }, host });
    assert.is(r.status, 410, path);
    assert.is(r.body.error.code, code, path);
  }
});

test.after(() => h.close());
test.run();
