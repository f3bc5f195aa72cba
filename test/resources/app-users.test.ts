import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const u = await newUser(h);
const key = u.api_key;

const SERVER = `export default { fetch(req, ctx) {
  const path = new URL(req.url).pathname;
  if (path === '/me') return Response.json({ user: ctx.auth.currentUser(req), hasCookie: req.headers.has('cookie') });
  if (path === '/admin') {
    try { ctx.auth.requireRole(req, 'admin'); return new Response('welcome'); }
    catch (e) { return Response.json({ code: e.code }, { status: e.status }); }
  }
  return Response.json({ auth: typeof ctx.auth });
} };`;

async function app(auth: Record<string, unknown> | undefined) {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', SERVER, 'text/javascript')],
    ...(auth ? { resources: { auth } } : {}),
  });
  const r = await h.call('PUT', '/v0/apps', { key, body });
  assert.is(r.body.status, 'published', r.text);
  return `${r.body.app_id}.apps.localhost`;
}
const cookieOf = (r: { headers: Headers }) => r.headers.get('set-cookie')?.split(';')[0] ?? '';
const creds = (email: string, password = 'correct horse battery') => ({ email, password });

test('signup sets a host-only __Host- HttpOnly Secure SameSite=Lax session cookie; session and ctx.auth.currentUser see the user', async () => {
  const host = await app({ mode: 'app_users', public_signup: true });
  const r = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: creds('Ann@Example.com'),
  });
  assert.is(r.status, 201, r.text);
  assert.match(r.body.user.id, /^usr_/);
  assert.equal(r.body.user, {
    id: r.body.user.id,
    email: 'ann@example.com',
    roles: [],
    verified: false,
  });
  const setCookie = r.headers.get('set-cookie')!;
  assert.match(
    setCookie,
    /^__Host-platform_app_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+$/,
  );
  assert.not.match(setCookie, 'Domain', 'host-only');
  const session = await h.call('GET', '/_platform/auth/session', {
    host,
    headers: { cookie: cookieOf(r) },
  });
  assert.equal(session.body.user, r.body.user);
  const me = await h.call('GET', '/me', { host, headers: { cookie: cookieOf(r) } });
  assert.equal(
    me.body,
    { user: r.body.user, hasCookie: false },
    'app code sees the user, never the cookie',
  );
  assert.equal((await h.call('GET', '/me', { host })).body.user, null);
});

test('login: right password works; unknown e-mail and wrong password get the same 401; logout ends the session', async () => {
  const host = await app({ mode: 'app_users', public_signup: true });
  await h.call('POST', '/_platform/auth/signup', { host, body: creds('bob@example.com') });
  const ok = await h.call('POST', '/_platform/auth/login', {
    host,
    body: creds('BOB@example.com'),
  });
  assert.is(ok.status, 200);
  const wrong = await h.call('POST', '/_platform/auth/login', {
    host,
    body: creds('bob@example.com', 'wrong password!'),
  });
  const unknown = await h.call('POST', '/_platform/auth/login', {
    host,
    body: creds('nobody@example.com'),
  });
  assert.is(wrong.status, 401);
  assert.equal(unknown.body, wrong.body, 'no hint about which e-mails exist');
  const dup = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: creds('bob@example.com'),
  });
  assert.is(dup.status, 409);
  const out = await h.call('POST', '/_platform/auth/logout', {
    host,
    headers: { cookie: cookieOf(ok), origin: `http://${host}` },
  });
  assert.is(out.status, 200);
  assert.match(out.headers.get('set-cookie')!, 'Max-Age=0');
  assert.is(
    (await h.call('GET', '/_platform/auth/session', { host, headers: { cookie: cookieOf(ok) } }))
      .status,
    401,
  );
  for (const bad of [{ email: 'x', password: 'long enough pw' }, {}]) {
    assert.is((await h.call('POST', '/_platform/auth/login', { host, body: bad })).status, 400);
  }
  // a short password is just a wrong one at login (length rules are for new passwords)
  assert.is(
    (
      await h.call('POST', '/_platform/auth/login', {
        host,
        body: { email: 'a@b.co', password: 'short' },
      })
    ).status,
    401,
  );
});

test("one app's session means nothing on another app", async () => {
  const a = await app({ mode: 'app_users', public_signup: true });
  const b = await app({ mode: 'app_users', public_signup: true });
  const r = await h.call('POST', '/_platform/auth/signup', {
    host: a,
    body: creds('cat@example.com'),
  });
  assert.is(
    (await h.call('GET', '/_platform/auth/session', { host: b, headers: { cookie: cookieOf(r) } }))
      .status,
    401,
  );
  assert.is(
    (await h.call('GET', '/me', { host: b, headers: { cookie: cookieOf(r) } })).body.user,
    null,
  );
});

test('cross-site requests are refused; signup needs public_signup; apps without app users have no auth routes or ctx.auth', async () => {
  const host = await app({ mode: 'app_users', public_signup: true });
  const evil = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: creds('eve@example.com'),
    headers: { origin: 'https://evil.example' },
  });
  assert.is(evil.status, 403);
  const fetchMeta = await h.call('POST', '/_platform/auth/login', {
    host,
    body: creds('eve@example.com'),
    headers: { 'sec-fetch-site': 'cross-site' },
  });
  assert.is(fetchMeta.status, 403);
  const same = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: creds('eve@example.com'),
    headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' },
  });
  assert.is(same.status, 201);
  const closed = await app({ mode: 'app_users', public_signup: false });
  assert.is(
    (
      await h.call('POST', '/_platform/auth/signup', {
        host: closed,
        body: creds('dan@example.com'),
      })
    ).status,
    403,
  );
  const none = await app(undefined);
  assert.is((await h.call('GET', '/_platform/auth/session', { host: none })).status, 404);
  assert.equal((await h.call('GET', '/x', { host: none })).body, { auth: 'undefined' });
  assert.equal((await h.call('GET', '/x', { host })).body, { auth: 'object' });
});

test('requireRole: 401 without a session, 403 without the role, the user with it', async () => {
  const host = await app({ mode: 'app_users', public_signup: true, roles: ['admin'] });
  assert.equal((await h.call('GET', '/admin', { host })).body, { code: 'unauthenticated' });
  const r = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: creds('fay@example.com'),
  });
  const denied = await h.call('GET', '/admin', { host, headers: { cookie: cookieOf(r) } });
  assert.is(denied.status, 403);
  await h.deps.db
    .updateTable('app_users')
    .set({ roles: JSON.stringify(['admin']) })
    .where('id', '=', r.body.user.id)
    .execute();
  assert.is(
    (await h.call('GET', '/admin', { host, headers: { cookie: cookieOf(r) } })).text,
    'welcome',
  );
});

test('login attempts are rate-limited per e-mail', async () => {
  const host = await app({ mode: 'app_users', public_signup: true });
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++)
    statuses.push(
      (
        await h.call('POST', '/_platform/auth/login', {
          host,
          body: creds('gus@example.com', `wrong-${i}-password`),
        })
      ).status,
    );
  assert.ok(statuses.slice(0, 10).every((s) => s === 401));
  assert.is(statuses[11], 429);
});

test.after(() => h.close());
test.run();
