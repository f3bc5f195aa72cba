import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;
const SERVER = `export default { fetch(req, ctx) { try { return Response.json(ctx.auth.requireRole(req, 'editor')) } catch (e) { return Response.json({ code: e.code }, { status: e.status }) } } };`;
const body = (auth: unknown) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', SERVER, 'text/javascript')],
    resources: { auth },
  });
const app = (
  await h.call('PUT', '/v0/apps', {
    key,
    body: body({ mode: 'app_users', roles: ['editor', 'viewer-role'] }),
  })
).body;
const host = `${app.app_id}.apps.localhost`;
const tokenOf = (url: string) => new URL(url).hash.replace('#token=', '');

test('an admin invite creates, once, an app user with the invited roles; it grants nothing on the platform', async () => {
  const platformUsers = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from users`.execute(h.deps.db)).rows[0]!.n;
  const before = await platformUsers();
  const r = await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, {
    key,
    body: { email: 'Ed@Example.com', roles: ['editor'] },
  });
  assert.is(r.status, 200, r.text);
  assert.match(r.body.invite_id, /^inv_/);
  assert.is(r.body.email, 'ed@example.com');
  assert.equal(r.body.roles, ['editor']);
  assert.ok(
    Date.parse(r.body.expires_at) > Date.now() + 6 * 86_400_000,
    'default lifetime: 7 days',
  );
  assert.match(
    r.body.invite_url,
    new RegExp(
      `^http://${app.app_id}\\.apps\\.localhost:8787/_platform/auth/invite#token=[A-Za-z0-9_-]{43}$`,
    ),
  );
  const page = await h.call('GET', '/_platform/auth/invite', { host });
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type')!, 'text/html');
  assert.is(page.headers.get('referrer-policy'), 'no-referrer');
  const accept = await h.call('POST', '/_platform/auth/invite/accept', {
    host,
    body: { token: tokenOf(r.body.invite_url), password: 'a good password' },
  });
  assert.is(accept.status, 201, accept.text);
  assert.equal(
    { ...accept.body.user, id: 'x' },
    { id: 'x', email: 'ed@example.com', roles: ['editor'], verified: true },
  );
  const cookie = accept.headers.get('set-cookie')!.split(';')[0]!;
  const me = await h.call('GET', '/x', { host, headers: { cookie } });
  assert.is(me.status, 200, 'the invited role satisfies requireRole');
  assert.equal(me.body.roles, ['editor']);
  const again = await h.call('POST', '/_platform/auth/invite/accept', {
    host,
    body: { token: tokenOf(r.body.invite_url), password: 'a good password' },
  });
  assert.is(again.status, 400);
  assert.is(again.body.error.code, 'invalid_invite');
  assert.is(await platformUsers(), before, 'no platform user was created');
  const login = await h.call('POST', '/_platform/auth/login', {
    host,
    body: { email: 'ed@example.com', password: 'a good password' },
  });
  assert.is(login.status, 200);
});

test('expired or forged tokens are refused; expires_in_seconds bounds', async () => {
  const r = await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, {
    key,
    body: { email: 'late@example.com', expires_in_seconds: 1 },
  });
  await sql`update app_invites set expires_at = now() - interval '1 second' where id = ${r.body.invite_id}`.execute(
    h.deps.db,
  );
  assert.is(
    (
      await h.call('POST', '/_platform/auth/invite/accept', {
        host,
        body: { token: tokenOf(r.body.invite_url), password: 'a good password' },
      })
    ).body.error.code,
    'invalid_invite',
  );
  assert.is(
    (
      await h.call('POST', '/_platform/auth/invite/accept', {
        host,
        body: { token: 'x'.repeat(43), password: 'a good password' },
      })
    ).status,
    400,
  );
  for (const bad of [
    { email: 'a@b.co', expires_in_seconds: 0 },
    { email: 'a@b.co', expires_in_seconds: 2_592_001 },
    { email: 'nope' },
    { email: 'a@b.co', extra: 1 },
    { email: 'a@b.co', roles: ['Bad Role'] },
  ]) {
    const res = await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, { key, body: bad });
    assert.is(res.status, 400, JSON.stringify(bad));
  }
  assert.is(
    (
      await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, {
        key,
        body: { email: 'a@b.co', expires_in_seconds: 2_592_000 },
      })
    ).status,
    200,
  );
});

test('auth_disabled, invalid_role, viewers 403, non-members 404', async () => {
  const plain = (await h.call('PUT', '/v0/apps', { key, body: body({ mode: 'none' }) })).body;
  const disabled = await h.call('POST', `/v0/apps/${plain.app_id}/admin-invites`, {
    key,
    body: { email: 'a@b.co' },
  });
  assert.is(disabled.body.error.code, 'auth_disabled');
  const role = await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, {
    key,
    body: { email: 'a@b.co', roles: ['admin'] },
  });
  assert.is(role.status, 400);
  assert.is(role.body.error.code, 'invalid_role');
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${app.app_id}/admin-invites`, body: { email: 'a@b.co' } },
    { ownerAccountId: u.account_id, deniedRoles: ['viewer'] },
  );
  const dev = await newMember(h, u.account_id, 'developer');
  assert.is(
    (
      await h.call('POST', `/v0/apps/${app.app_id}/admin-invites`, {
        key: dev.api_key,
        body: { email: 'dev@b.co' },
      })
    ).status,
    200,
  );
});

test.after(() => h.close());
test.run();
