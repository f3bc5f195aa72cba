/**
 * App-user administration from the app's team: list app users with their last sign-in, change
 * roles (only declared ones), disable (their session ends at its next request, they cannot sign
 * in) and re-enable, sign out everywhere, delete; list and withdraw invitations (a withdrawn link
 * stops working). Viewers read; owners, admins and developers change; every change is an event.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const viewer = await newMember(h, owner.account_id, 'viewer');
const developer = await newMember(h, owner.account_id, 'developer');
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) { return Response.json({ user: await ctx.auth.currentUser(request) }); } };`,
  {
    resources: { auth: { mode: 'app_users', public_signup: true, roles: ['editor', 'moderator'] } },
  },
);
const origin = `http://${app.host}`;

async function signUp(email: string): Promise<string> {
  const r = await h.call('POST', '/_platform/auth/signup', {
    host: app.host,
    headers: { origin },
    body: { email, password: 'correct horse battery' },
  });
  assert.is(r.status, 201, r.text);
  return r.headers.get('set-cookie')!.split(';')[0]!;
}
async function logIn(email: string) {
  return h.call('POST', '/_platform/auth/login', {
    host: app.host,
    headers: { origin },
    body: { email, password: 'correct horse battery' },
  });
}
const sessionOf = (cookie: string) =>
  h.call('GET', '/_platform/auth/session', { host: app.host, headers: { cookie } });

const alice = await signUp('alice@example.com');
const bob = await signUp('bob@example.com');
const users = async (key = owner.api_key) =>
  (await h.api('GET /v0/apps/{app_id}/app-users', { key, params: { app_id: app.appId } }))
    .app_users;
const idOf = async (email: string) => (await users()).find((u) => u.email === email)!.id;

test('the team lists app users, newest first, with roles, verification and last sign-in', async () => {
  const list = await users(viewer.api_key);
  assert.equal(
    list.map((u) => [u.email, u.roles, u.verified, u.disabled]),
    [
      ['bob@example.com', [], false, false],
      ['alice@example.com', [], false, false],
    ],
  );
  for (const u of list) assert.ok(u.last_sign_in_at, 'signing up signed them in');
  const found = await h.api('GET /v0/apps/{app_id}/app-users', {
    key: owner.api_key,
    params: { app_id: app.appId },
    query: { q: 'ALI' },
  });
  assert.equal(
    found.app_users.map((u) => u.email),
    ['alice@example.com'],
  );
  const paged = await h.api('GET /v0/apps/{app_id}/app-users', {
    key: owner.api_key,
    params: { app_id: app.appId },
    query: { limit: '1' },
  });
  const next = await h.api('GET /v0/apps/{app_id}/app-users', {
    key: owner.api_key,
    params: { app_id: app.appId },
    query: { limit: '1', cursor: paged.cursor! },
  });
  assert.equal(
    [...paged.app_users, ...next.app_users].map((u) => u.email),
    ['bob@example.com', 'alice@example.com'],
  );
  assert.is(next.cursor, null);
});

test('roles: declared ones only; app code sees them', async () => {
  const id = await idOf('alice@example.com');
  const bad = await h.answer('PATCH /v0/apps/{app_id}/app-users/{user_id}', {
    key: developer.api_key,
    params: { app_id: app.appId, user_id: id },
    body: { roles: ['root'] },
  });
  assert.is(bad.status, 400);
  assert.is(bad.error?.code, 'invalid_role');
  const changed = await h.api('PATCH /v0/apps/{app_id}/app-users/{user_id}', {
    key: developer.api_key,
    params: { app_id: app.appId, user_id: id },
    body: { roles: ['editor'] },
  });
  assert.equal(changed.roles, ['editor']);
  const seen = await h.call('GET', '/me', { host: app.host, headers: { cookie: alice } });
  assert.equal(seen.body.user.roles, ['editor']);
});

test('disable ends the session at once and refuses sign-in; re-enable lets them back', async () => {
  const id = await idOf('alice@example.com');
  assert.is((await sessionOf(alice)).status, 200);
  const disabled = await h.api('PATCH /v0/apps/{app_id}/app-users/{user_id}', {
    key: owner.api_key,
    params: { app_id: app.appId, user_id: id },
    body: { disabled: true },
  });
  assert.is(disabled.disabled, true);
  assert.is((await sessionOf(alice)).status, 401, 'the session ended');
  const refused = await logIn('alice@example.com');
  assert.is(refused.status, 403);
  assert.match(refused.body.error.message, /disabled/);
  await h.api('PATCH /v0/apps/{app_id}/app-users/{user_id}', {
    key: owner.api_key,
    params: { app_id: app.appId, user_id: id },
    body: { disabled: false },
  });
  assert.is((await logIn('alice@example.com')).status, 200);
});

test('sign out everywhere ends every session; delete removes the user', async () => {
  const id = await idOf('bob@example.com');
  const second = (await logIn('bob@example.com')).headers.get('set-cookie')!.split(';')[0]!;
  const out = await h.api('POST /v0/apps/{app_id}/app-users/{user_id}/sign-out', {
    key: owner.api_key,
    params: { app_id: app.appId, user_id: id },
  });
  assert.is(out.sessions_revoked, 2);
  assert.is((await sessionOf(bob)).status, 401);
  assert.is((await sessionOf(second)).status, 401);
  assert.is((await logIn('bob@example.com')).status, 200, 'they may sign in again');

  await h.api('DELETE /v0/apps/{app_id}/app-users/{user_id}', {
    key: owner.api_key,
    params: { app_id: app.appId, user_id: id },
  });
  assert.not.ok((await users()).some((u) => u.email === 'bob@example.com'));
  assert.is((await logIn('bob@example.com')).status, 401);
  const again = await h.call('DELETE', `/v0/apps/${app.appId}/app-users/${id}`, {
    key: owner.api_key,
  });
  assert.is(again.status, 404);
});

test('pending invitations are listed and can be withdrawn; a withdrawn link stops working', async () => {
  const made = await h.api('POST /v0/apps/{app_id}/admin-invites', {
    key: owner.api_key,
    params: { app_id: app.appId },
    body: { email: 'carol@example.com', roles: ['moderator'] },
  });
  const pending = await h.api('GET /v0/apps/{app_id}/invites', {
    key: viewer.api_key,
    params: { app_id: app.appId },
  });
  assert.equal(
    pending.invites.map((i) => [i.invite_id, i.email, i.roles]),
    [[made.invite_id, 'carol@example.com', ['moderator']]],
  );
  await h.api('DELETE /v0/apps/{app_id}/invites/{invite_id}', {
    key: owner.api_key,
    params: { app_id: app.appId, invite_id: made.invite_id },
  });
  const token = new URL(made.invite_url).hash.replace('#token=', '');
  const accept = await h.call('POST', '/_platform/auth/invite/accept', {
    host: app.host,
    headers: { origin },
    body: { token, password: 'correct horse battery' },
  });
  assert.ok(accept.status >= 400, `a withdrawn invitation is refused (${accept.status})`);
  const none = await h.api('GET /v0/apps/{app_id}/invites', {
    key: owner.api_key,
    params: { app_id: app.appId },
  });
  assert.equal(none.invites, []);
});

test('every member reads; viewers change nothing; strangers see nothing', async () => {
  const id = await idOf('alice@example.com');
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.appId}/app-users` },
    {
      ownerAccountId: owner.account_id,
    },
  );
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${app.appId}/invites` },
    {
      ownerAccountId: owner.account_id,
    },
  );
  for (const route of [
    { method: 'PATCH', path: `/v0/apps/${app.appId}/app-users/${id}`, body: { roles: [] } },
    { method: 'POST', path: `/v0/apps/${app.appId}/app-users/${id}/sign-out` },
    { method: 'DELETE', path: `/v0/apps/${app.appId}/app-users/${id}` },
    { method: 'DELETE', path: `/v0/apps/${app.appId}/invites/inv_nothing` },
  ])
    await checkAuthMatrix(h, route, { ownerAccountId: owner.account_id, deniedRoles: ['viewer'] });
  const events = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params: { app_id: app.appId },
  });
  const types = new Set(events.events.map((e) => e.type));
  for (const t of [
    'app_user.updated',
    'app_user.signed_out',
    'app_user.deleted',
    'app_invite.withdrawn',
  ])
    assert.ok(types.has(t), `${t} is in the event log`);
});

test.after(() => h.close());
test.run();
