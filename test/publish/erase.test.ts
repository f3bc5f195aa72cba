/**
 * `POST /v0/apps/<id>/erase`: an unpublished app's rows, files, app users and secrets are erased for
 * good, their storage stops counting, the event log says who did it, and publishing again brings
 * the app back empty (a unique value free again, the old file and session gone). A published app,
 * a wrong confirmation and a role that may not unpublish are refused and erase nothing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsOf } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h, 'erase');
const key = owner.api_key;
const developer = await newMember(h, owner.account_id, 'developer');

const UPLOAD = `export default { async fetch(req, ctx) {
  const f = await ctx.files.store('pics').createUpload(new TextEncoder().encode('picture'), { filename: 'p.txt', content_type: 'text/plain' });
  return Response.json({ url: await ctx.files.store('pics').getPublicUrl(f.file_id) });
} };`;
const body = site({
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
  files: [file('public/index.html', 'x'), file('server.js', UPLOAD, 'text/javascript')],
  resources: {
    auth: { mode: 'app_users', public_signup: true },
    data: {
      collections: {
        people: {
          fields: { email: 'string' },
          indexes: [{ name: 'by_email', fields: ['email'], unique: true }],
        },
      },
    },
    files: { stores: { pics: { public: true } } },
    secrets: { required: ['API_TOKEN'] },
  },
});
const first = await h.call('PUT', '/v0/apps', { key, body });
const appId = first.body.app_id as string;
const host = `${appId}.apps.localhost`;
const rows = `/v0/apps/${appId}/data/people`;
assert.is(
  (await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, { key, body: { value: 'tok-123' } }))
    .status,
  200,
);
const live = await h.call('PUT', `/v0/apps/${appId}`, { key, body });
assert.is(live.body.activation.status, 'live', live.text);

for (const email of ['a@example.com', 'b@example.com'])
  assert.is((await h.call('POST', rows, { key, body: { email } })).status, 201);
const uploaded = await h.call('POST', '/upload', { host });
assert.is(uploaded.status, 200, uploaded.text);
const filePath = new URL(uploaded.body.url as string).pathname;
const signup = await h.call('POST', '/_platform/auth/signup', {
  host,
  body: { email: 'user@example.com', password: 'correct horse battery' },
});
assert.is(signup.status, 201, signup.text);
const appCookie = signup.headers.get('set-cookie')!.split(';')[0]!;

const stored = async () =>
  (await h.call('GET', `/v0/apps/${appId}/resources`, { key })).body.usage[
    'storage.bytes'
  ] as number;
const storedBefore = await stored();
const erase = (confirm: string, k = key) =>
  h.call('POST', `/v0/apps/${appId}/erase`, { key: k, body: { confirm } });

test('a published app is not erased: 409, and its rows stay', async () => {
  const r = await erase(appId);
  assert.is(r.status, 409, r.text);
  assert.is(r.body.error.code, 'conflict');
  assert.match(r.body.error.message, 'unpublish it first');
  assert.is((await h.call('GET', rows, { key })).body.rows.length, 2);
});

test('once unpublished: a wrong confirmation and a developer are refused', async () => {
  assert.is((await h.call('DELETE', `/v0/apps/${appId}`, { key })).status, 200);
  const wrong = await erase('not-the-app');
  assert.is(wrong.status, 400, wrong.text);
  assert.is(wrong.body.error.code, 'invalid_request');
  assert.match(wrong.body.error.message, appId);
  const dev = await erase(appId, developer.api_key);
  assert.is(dev.status, 403, dev.text);
  assert.is(dev.body.error.code, 'forbidden');
  assert.is(await stored(), storedBefore, 'nothing erased');
});

test('erasing deletes rows, files, app users and secrets, frees the storage, and is recorded', async () => {
  const r = await erase(appId);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.erased, {
    rows: 2,
    files: 1,
    kv_keys: 0,
    r2_objects: 0,
    app_users: 1,
    secrets: 1,
  });
  assert.is(r.body.freed_bytes, storedBefore);
  assert.ok(storedBefore > 0);
  assert.is(await stored(), 0);
  const [event] = await eventsOf(h, key, appId, 'app.data_erased');
  assert.ok(event, 'event recorded');
  assert.equal(event!.metadata, {
    rows: 2,
    files: 1,
    kv_keys: 0,
    r2_objects: 0,
    app_users: 1,
    secrets: 1,
  });
  assert.ok((await eventsOf(h, key, appId, 'app.unpublished')).length, 'earlier events kept');
  const secrets = await h.call('GET', `/v0/apps/${appId}/secrets`, { key });
  assert.equal(
    (secrets.body.secrets as { present: boolean }[]).filter((s) => s.present),
    [],
  );
  const again = await erase(appId);
  assert.equal(again.body.erased, {
    rows: 0,
    files: 0,
    kv_keys: 0,
    r2_objects: 0,
    app_users: 0,
    secrets: 0,
  });
});

test('published again, the app comes back empty', async () => {
  const back = await h.call('PUT', `/v0/apps/${appId}`, { key, body });
  assert.is(back.body.activation.status, 'pending_secrets', 'its secret is gone too');
  assert.is(
    (await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, { key, body: { value: 'new' } }))
      .status,
    200,
  );
  const live = await h.call('PUT', `/v0/apps/${appId}`, { key, body });
  assert.is(live.body.activation.status, 'live', live.text);
  assert.equal((await h.call('GET', rows, { key })).body.rows, []);
  const reused = await h.call('POST', rows, { key, body: { email: 'a@example.com' } });
  assert.is(reused.status, 201, 'the unique value is free again');
  assert.is((await h.call('GET', filePath, { host })).status, 404);
  const session = await h.call('GET', '/_platform/auth/session', {
    host,
    headers: { cookie: appCookie },
  });
  assert.is(session.body.user ?? null, null, 'the old session signs no one in');
  const signIn = await h.call('POST', '/_platform/auth/login', {
    host,
    body: { email: 'user@example.com', password: 'correct horse battery' },
  });
  assert.is(signIn.status, 401, signIn.text);
});

test.after(() => h.close());
test.run();
