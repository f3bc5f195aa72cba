/**
 * Previews: `PUT /v0/apps/<id>?preview=true` stores a release beside the live one and serves it at
 * `<app_id>--<release token>.<apps host>` to a browser holding a grant; make-live moves the pointer
 * with the checks of a publish.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, type Harness, newMember, newUser } from '../_lib/harness.ts';
import { eventsOf, waitFor } from '../_lib/apps.ts';
import pg from 'pg';

let h: Harness;
let key: string;
let accountId: string;

test.before(async () => {
  h = await createHarness();
  const u = await newUser(h, 'previews');
  key = u.api_key;
  accountId = u.account_id;
});
test.after(() => h.close());

/** A server app whose `/hello` says which version it is (static root `public/`). */
function version(v: string, resources?: unknown) {
  return site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', `<h1>version ${v}</h1>`),
      file(
        'server.js',
        `export default { fetch(req) { return new Response('hello from ${v} at ' + new URL(req.url).host + ', cookies: ' + (req.headers.get('cookie') ?? 'none')); } };`,
        'text/javascript',
      ),
    ],
    ...(resources ? { resources } : {}),
  });
}

async function publishLive(v: string): Promise<string> {
  const r = await h.call('PUT', '/v0/apps', { key, body: version(v) });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.status, 'published');
  return r.body.app_id;
}

/** A request to a host of the apps plane, as a browser would send it. */
async function visit(host: string, path: string, headers: Record<string, string> = {}) {
  return h.call('GET', path, { host, headers });
}

const cookieOf = (setCookie: string | null) => setCookie!.split(';')[0]!;

test('a preview is stored beside the live release and served only with a grant', async () => {
  const appId = await publishLive('one');
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('two'),
  });
  assert.is(p.status, 200, p.text);
  assert.is(p.body.status, 'stored');
  assert.is(p.body.activation.status, 'inactive');
  assert.match(p.body.activation.reasons[0], /preview/);
  const previewId = p.body.release_id as string;
  const previewHost = `${appId}--${previewId.slice(4)}.apps.localhost`;
  const previewOrigin = `http://${previewHost}:${h.config.publicPort}`;
  assert.is(p.body.preview.release_id, previewId);
  assert.is(p.body.preview.origin, previewOrigin);
  assert.ok(p.body.preview.url.startsWith(`${previewOrigin}/_platform/preview?grant=`));
  assert.ok(Date.parse(p.body.preview.expires_at) > Date.now() + 6 * 24 * 3600_000);

  // the canonical origin still serves the live release
  const app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(app.body.live_release_id, p.body.previous_release_id);
  assert.match((await visit(`${appId}.apps.localhost`, '/')).text, /version one/);

  // without a grant: refused, as JSON to fetch and as a page to a navigation, never indexed
  const bare = await visit(previewHost, '/hello');
  assert.is(bare.status, 401);
  assert.is(bare.body.error.code, 'unauthorized');
  assert.is(bare.headers.get('x-robots-tag'), 'noindex, nofollow');
  const page = await visit(previewHost, '/', { 'sec-fetch-mode': 'navigate' });
  assert.is(page.status, 401);
  assert.match(page.text, /This preview is private/);
  assert.not.match(page.text, /version two/);
  const robots = await visit(previewHost, '/robots.txt');
  assert.is(robots.status, 200);
  assert.is(robots.text, 'User-agent: *\nDisallow: /\n');

  // the link sets a host-only cookie and sends the browser on, without the grant
  const entry = new URL(p.body.preview.url);
  const enter = await visit(previewHost, `${entry.pathname}${entry.search}&to=/hello`);
  assert.is(enter.status, 303);
  assert.is(enter.headers.get('location'), '/hello');
  const setCookie = enter.headers.get('set-cookie')!;
  assert.match(setCookie, /^__Host-platform_preview=\d+\.[\w-]{43}; Path=\/; HttpOnly; Secure/);
  assert.not.match(setCookie, /Domain=/i);
  const cookie = cookieOf(setCookie);

  const hello = await visit(previewHost, '/hello', { cookie });
  assert.is(hello.status, 200, hello.text);
  assert.is(
    hello.text,
    `hello from two at ${previewHost}, cookies: none`,
    'the grant never reaches app code',
  );
  assert.is(hello.headers.get('x-robots-tag'), 'noindex, nofollow');
  const index = await visit(previewHost, '/', { cookie });
  assert.match(index.text, /version two/);
  assert.match((await visit(`${appId}.apps.localhost`, '/hello')).text, /hello from one/);

  // an open redirect is not on offer
  const away = await visit(previewHost, `${entry.pathname}${entry.search}&to=//evil.test/`);
  assert.is(away.headers.get('location'), '/');

  // a grant for this release opens no other release, a changed one opens nothing
  const other = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('three'),
  });
  const otherHost = `${appId}--${(other.body.release_id as string).slice(4)}.apps.localhost`;
  assert.is((await visit(otherHost, '/hello', { cookie })).status, 401);
  const forged = cookie.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A'));
  assert.is((await visit(previewHost, '/hello', { cookie: forged })).status, 401);
  const wrongLink = new URL(other.body.preview.url);
  assert.is((await visit(previewHost, `${wrongLink.pathname}${wrongLink.search}`)).status, 401);

  const created = (await eventsOf(h, key, appId, 'release.created')).find(
    (e) => e.release_id === previewId,
  );
  assert.is(created?.metadata.preview, true);
  assert.is(created?.severity, 'info');

  // the release list says which releases are previews and where
  const list = await h.call('GET', `/v0/apps/${appId}/releases`, { key });
  const listed = list.body.releases.find((r: { release_id: string }) => r.release_id === previewId);
  assert.is(listed.preview, true);
  assert.is(listed.preview_origin, previewOrigin);
  assert.is(listed.is_live, false);
});

test('make live: the pointer moves, the preview origin closes, events say so', async () => {
  const appId = await publishLive('one');
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, { key, body: version('two') });
  const previewId = p.body.release_id as string;
  const live = await h.call('POST', `/v0/apps/${appId}/releases/${previewId}/make-live`, { key });
  assert.is(live.status, 200, live.text);
  assert.is(live.body.status, 'published');
  assert.is(live.body.release_id, previewId);
  assert.is(live.body.previous_release_id, p.body.previous_release_id);
  assert.is(live.body.activation.status, 'live');
  assert.match((await visit(`${appId}.apps.localhost`, '/hello')).text, /hello from two/);
  const activated = (await eventsOf(h, key, appId, 'release.activated')).find(
    (e) => e.release_id === previewId,
  );
  assert.is(activated?.metadata.preview, true);

  // once live it is an ordinary release: no preview origin, no second make-live, rollback works
  const again = await h.call('POST', `/v0/apps/${appId}/releases/${previewId}/make-live`, { key });
  assert.is(again.status, 409);
  const cookie = cookieOf(
    (
      await visit(
        new URL(p.body.preview.url).host,
        new URL(p.body.preview.url).pathname + new URL(p.body.preview.url).search,
      )
    ).headers.get('set-cookie'),
  );
  assert.is((await visit(new URL(p.body.preview.origin).host, '/hello', { cookie })).status, 404);
  const link = await h.call('POST', `/v0/apps/${appId}/releases/${previewId}/preview-link`, {
    key,
  });
  assert.is(link.status, 409);

  // an ordinary release is not made live this way; it is rolled back to
  const plain = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/${p.body.previous_release_id}/make-live`,
    { key },
  );
  assert.is(plain.status, 409);
  assert.match(plain.body.error.message, /roll back/);
  const back = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: p.body.previous_release_id },
  });
  assert.is(back.status, 200, back.text);
});

test('make live makes the checks of a publish again: secrets deleted since', async () => {
  const first = await h.call('PUT', '/v0/apps', {
    key,
    body: version('one', { secrets: { required: ['TOKEN'] } }),
  });
  const appId = first.body.app_id as string;
  assert.is(first.body.activation.status, 'pending_secrets');
  await h.call('PUT', `/v0/apps/${appId}/secrets/TOKEN`, { key, body: { value: 's3cret' } });
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('two', { secrets: { required: ['TOKEN'] } }),
  });
  assert.is(p.body.activation.status, 'inactive');
  await h.call('DELETE', `/v0/apps/${appId}/secrets/TOKEN`, { key });
  const refused = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/${p.body.release_id}/make-live`,
    {
      key,
    },
  );
  assert.is(refused.status, 409, refused.text);
  assert.is(refused.body.error.code, 'pending_secrets');
  assert.equal(refused.body.error.details.missing_secrets, ['TOKEN']);
  const app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(app.body.live_release_id, null, 'nothing moved');
});

test('a preview waiting for secrets stays a preview when published again', async () => {
  const appId = await publishLive('one');
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('two', { secrets: { required: ['API_KEY'] } }),
  });
  assert.is(p.body.activation.status, 'pending_secrets');
  assert.is(p.body.preview, undefined, 'no link to a preview that is not served');
  const link = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/${p.body.release_id}/preview-link`,
    {
      key,
    },
  );
  assert.is(link.status, 409);
  await h.call('PUT', `/v0/apps/${appId}/secrets/API_KEY`, { key, body: { value: 'k' } });
  const again = await h.call('POST', `/v0/apps/${appId}/releases/${p.body.release_id}/republish`, {
    key,
  });
  assert.is(again.status, 200, again.text);
  assert.is(again.body.status, 'stored');
  assert.is(again.body.activation.status, 'inactive');
  assert.ok(again.body.preview?.url);
  const app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(app.body.live_release_id, p.body.previous_release_id);
});

test('a preview needs a live app beside it; a slug cannot look like a preview', async () => {
  const appId = await publishLive('one');
  await h.call('DELETE', `/v0/apps/${appId}`, { key });
  const gone = await h.call('PUT', `/v0/apps/${appId}?preview=true`, { key, body: version('x') });
  assert.is(gone.status, 409);
  const badQuery = await h.call('PUT', `/v0/apps/${appId}?preview=yes`, {
    key,
    body: version('x'),
  });
  assert.is(badQuery.status, 400);
  const live = await publishLive('two');
  const slug = await h.call('POST', `/v0/apps/${live}/slugs`, {
    key,
    body: { slug: `${live}--abcdefghjkmnpqrstvwx` },
  });
  assert.is(slug.status, 400);
  assert.match(slug.body.error.message, /preview/);
});

test('revoking ends every link and cookie made until then, on every node; a new link opens again', async () => {
  const appId = await publishLive('one');
  const first = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('two'),
  });
  const second = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key,
    body: version('three'),
  });
  const hostOf = (r: { body: { release_id: string } }) =>
    `${appId}--${r.body.release_id.slice(4)}.apps.localhost`;
  const enter = (host: string, url: string) => {
    const u = new URL(url);
    return visit(host, `${u.pathname}${u.search}`, { 'sec-fetch-mode': 'navigate' });
  };
  const entered = await enter(hostOf(first), first.body.preview.url);
  const cookie = cookieOf(entered.headers.get('set-cookie'));
  assert.is((await visit(hostOf(first), '/hello', { cookie })).status, 200);
  const spare = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/${first.body.release_id}/preview-link`,
    { key },
  );

  // what other nodes hear: the app's change, from the revoking transaction
  const listener = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query('listen platform_changes');
  try {
    const dev = await newMember(h, accountId, 'developer');
    const revoked = await h.call('POST', `/v0/apps/${appId}/preview-links/revoke`, {
      key: dev.api_key,
    });
    assert.is(revoked.status, 200, revoked.text);
    assert.is(revoked.body.app_id, appId);
    assert.ok(Math.abs(Date.parse(revoked.body.revoked_at) - Date.now()) < 60_000);
    await waitFor(async () =>
      heard.some((p) => JSON.parse(p).kind === 'app' && JSON.parse(p).id === appId),
    );
  } finally {
    await listener.end();
  }

  // the cookie already in use, the links of both publishes and the spare link: all closed
  const refused = await visit(hostOf(first), '/hello', { cookie });
  assert.is(refused.status, 401);
  const page = await visit(hostOf(first), '/', { cookie, 'sec-fetch-mode': 'navigate' });
  assert.is(page.status, 401);
  assert.match(page.text, /revoked/);
  assert.is((await enter(hostOf(first), spare.body.url)).status, 401);
  assert.is((await enter(hostOf(second), second.body.preview.url)).status, 401);
  // the live release is not a preview: untouched
  assert.match((await visit(`${appId}.apps.localhost`, '/hello')).text, /hello from one/);

  // a link made now (in the same second, as likely as not) opens the preview again
  const fresh = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/${second.body.release_id}/preview-link`,
    { key },
  );
  const back = await enter(hostOf(second), fresh.body.url);
  assert.is(back.status, 303, back.text);
  const again = await visit(hostOf(second), '/hello', {
    cookie: cookieOf(back.headers.get('set-cookie')),
  });
  assert.is(again.status, 200);
  assert.match(again.text, /hello from three/);

  const events = await eventsOf(h, key, appId, 'app.preview_links_revoked');
  assert.is(events.length, 1);
  assert.ok(events[0]!.api_key_id, 'who revoked them');
});

test('who may revoke preview links: members who may publish', async () => {
  const appId = await publishLive('one');
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${appId}/preview-links/revoke` },
    { ownerAccountId: accountId, deniedRoles: ['viewer'] },
  );
});

test('who may preview and make live', async () => {
  const appId = await publishLive('one');
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, { key, body: version('two') });
  const rel = p.body.release_id as string;
  // every member may open a preview, a viewer included; a stranger cannot see the app
  const viewer = await newMember(h, accountId, 'viewer');
  const link = await h.call('POST', `/v0/apps/${appId}/releases/${rel}/preview-link`, {
    key: viewer.api_key,
  });
  assert.is(link.status, 200, link.text);
  assert.is(link.body.origin, p.body.preview.origin);
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${appId}/releases/${rel}/preview-link` },
    { ownerAccountId: accountId },
  );
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${appId}/releases/${rel}/make-live` },
    { ownerAccountId: accountId, deniedRoles: ['viewer'] },
  );
  const dev = await newMember(h, accountId, 'developer');
  const made = await h.call('POST', `/v0/apps/${appId}/releases/${rel}/make-live`, {
    key: dev.api_key,
  });
  assert.is(made.status, 200, made.text);
  const unknown = await h.call(
    'POST',
    `/v0/apps/${appId}/releases/rel_00000000000000000000/make-live`,
    {
      key,
    },
  );
  assert.is(unknown.status, 404);
});

test.run();
