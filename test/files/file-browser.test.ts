/**
 * The file browser's API: a store's files newest first with who uploaded them, a 5-minute signed
 * URL that serves a private store's file (and nothing without it), delete (the file stops being
 * served), the roles (every member lists and downloads; viewers do not delete) and the event.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const viewer = await newMember(h, owner.account_id, 'viewer');
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) {
    const u = new URL(request.url);
    const store = ctx.files.store(u.searchParams.get('store'));
    const f = await store.createUpload(u.searchParams.get('text'), { filename: u.searchParams.get('name'), content_type: 'text/plain' });
    return Response.json(f);
  } };`,
  { resources: { files: { stores: { pics: { public: true }, docs: { public: false } } } } },
);
async function upload(store: string, name: string, text: string): Promise<string> {
  const r = await h.call(
    'POST',
    `/up?store=${store}&name=${name}&text=${encodeURIComponent(text)}`,
    {
      host: app.host,
    },
  );
  assert.is(r.status, 200, r.text);
  return r.body.file_id as string;
}
const a = await upload('docs', 'a.txt', 'first secret');
const b = await upload('docs', 'b.txt', 'second secret');
const pic = await upload('pics', 'p.txt', 'public bytes');
const path = (u: string) => {
  const url = new URL(u);
  return url.pathname + url.search;
};

test('a store lists newest first, pages, and says whether it is public', async () => {
  const first = await h.api('GET /v0/apps/{app_id}/files/{store}', {
    key: viewer.api_key,
    params: { app_id: app.appId, store: 'docs' },
    query: { limit: '1' },
  });
  assert.is(first.public, false);
  assert.equal(
    first.files.map((f) => [f.file_id, f.filename, f.size, f.content_type]),
    [[b, 'b.txt', 13, 'text/plain']],
  );
  assert.is(first.files[0]!.public_url, null, 'a private file has no public URL');
  assert.is(first.files[0]!.owner_email, null, 'uploaded by app code, not an app user');
  const second = await h.api('GET /v0/apps/{app_id}/files/{store}', {
    key: viewer.api_key,
    params: { app_id: app.appId, store: 'docs' },
    query: { limit: '1', cursor: first.cursor! },
  });
  assert.equal(
    second.files.map((f) => f.file_id),
    [a],
  );
  assert.is(second.cursor, null);
  const pics = await h.api('GET /v0/apps/{app_id}/files/{store}', {
    key: owner.api_key,
    params: { app_id: app.appId, store: 'pics' },
  });
  assert.is(pics.public, true);
  const served = await h.call('GET', path(pics.files[0]!.public_url!), { host: app.host });
  assert.is(served.text, 'public bytes');
  const undeclared = await h.call('GET', `/v0/apps/${app.appId}/files/nope`, {
    key: owner.api_key,
  });
  assert.is(undeclared.status, 400);
  assert.is(undeclared.body.error.code, 'store_not_declared');
});

test('a signed URL serves a private file for five minutes; without one nothing is served', async () => {
  const signed = await h.api('POST /v0/apps/{app_id}/files/{store}/{file_id}/signed-url', {
    key: viewer.api_key,
    params: { app_id: app.appId, store: 'docs', file_id: a },
  });
  const left = Date.parse(signed.expires_at) - Date.now();
  assert.ok(left > 240_000 && left <= 300_000, `expires in ${left} ms`);
  const got = await h.call('GET', path(signed.url), { host: app.host });
  assert.is(got.status, 200);
  assert.is(got.text, 'first secret');
  const bare = await h.call('GET', new URL(signed.url).pathname, { host: app.host });
  assert.ok(bare.status === 401 || bare.status === 403, `unsigned: ${bare.status}`);
  assert.not.match(bare.text, 'first secret');
});

test('delete: owners, admins and developers; the file stops being served; an event names who', async () => {
  for (const route of [
    { method: 'GET', path: `/v0/apps/${app.appId}/files/docs` },
    { method: 'POST', path: `/v0/apps/${app.appId}/files/docs/${a}/signed-url` },
  ])
    await checkAuthMatrix(h, route, { ownerAccountId: owner.account_id });
  await checkAuthMatrix(
    h,
    { method: 'DELETE', path: `/v0/apps/${app.appId}/files/pics/${pic}` },
    { ownerAccountId: owner.account_id, deniedRoles: ['viewer'] },
  );
  const publicUrl = `/_platform/files/pics/${pic}`;
  assert.is((await h.call('GET', publicUrl, { host: app.host })).status, 200);
  await h.api('DELETE /v0/apps/{app_id}/files/{store}/{file_id}', {
    key: owner.api_key,
    params: { app_id: app.appId, store: 'pics', file_id: pic },
  });
  assert.is((await h.call('GET', publicUrl, { host: app.host })).status, 404);
  const again = await h.call('DELETE', `/v0/apps/${app.appId}/files/pics/${pic}`, {
    key: owner.api_key,
  });
  assert.is(again.status, 404);
  const events = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params: { app_id: app.appId },
  });
  const mine = events.events.filter((e) => (e.metadata as { file_id?: string }).file_id === pic);
  assert.ok(
    mine.some((e) => e.type === 'files.deleted_by_member' && /owner|user-/.test(e.message)),
  );
});

test.after(() => h.close());
test.run();
