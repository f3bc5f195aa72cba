/**
 * The data browser's API: an app's rows over `/v0`, read by every member, written by owners, admins
 * and developers, validated exactly as `ctx.data` validates (the same answers for the same bad
 * input), paged newest first, filtered with `ctx.data`'s `where`, and every change an event that
 * names who made it. App code sees what the console wrote.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const resources = {
  data: {
    collections: {
      people: { fields: { name: 'string' } },
      tasks: {
        fields: {
          title: 'string',
          status: { type: 'enum', values: ['open', 'done'] },
          due: 'datetime',
          who: { type: 'reference', collection: 'people' },
          meta: 'json',
        },
        indexes: [
          { name: 'by_status', fields: ['status'] },
          { name: 'title_key', fields: ['title'], unique: true },
        ],
      },
    },
  },
};
// the app's own code writes through ctx.data: what it answers is what the console must answer too
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) {
    const u = new URL(request.url);
    const tasks = ctx.data.collection('tasks');
    if (u.pathname === '/create') {
      try { return Response.json(await tasks.create(await request.json())); }
      catch (e) { return Response.json({ code: e.code, message: e.message }, { status: 400 }); }
    }
    if (u.pathname === '/list') return Response.json(await tasks.list({ limit: 1000 }));
    return new Response('ok');
  } };`,
  { resources },
);
const roles = Object.fromEntries(
  await Promise.all(
    (['admin', 'developer', 'viewer'] as const).map(async (r) => [
      r,
      await newMember(h, owner.account_id, r),
    ]),
  ),
) as Record<'admin' | 'developer' | 'viewer', { api_key: string }>;
const params = { app_id: app.appId, collection: 'tasks' };

test('every member reads; owners, admins and developers write; viewers and strangers do not', async () => {
  const row = await h.api('POST /v0/apps/{app_id}/data/{collection}', {
    key: owner.api_key,
    params,
    body: { title: 'matrix', status: 'open' },
  });
  const one = `/v0/apps/${app.appId}/data/tasks/${row.id}`;
  for (const route of [
    { method: 'GET', path: `/v0/apps/${app.appId}/data/tasks` },
    { method: 'GET', path: one },
  ])
    await checkAuthMatrix(h, route, { ownerAccountId: owner.account_id });
  for (const route of [
    { method: 'POST', path: `/v0/apps/${app.appId}/data/tasks`, body: { title: 'x' } },
    { method: 'PATCH', path: one, body: { status: 'done' } },
    { method: 'DELETE', path: one },
  ])
    await checkAuthMatrix(h, route, { ownerAccountId: owner.account_id, deniedRoles: ['viewer'] });
  assert.is(
    (await h.call('GET', `/v0/apps/${app.appId}/data/tasks`, { key: roles.viewer.api_key })).status,
    200,
  );
  for (const who of ['admin', 'developer'] as const) {
    const made = await h.call('POST', `/v0/apps/${app.appId}/data/tasks`, {
      key: roles[who].api_key,
      body: { title: `by ${who}` },
    });
    assert.is(made.status, 201, made.text);
  }
});

test('bad input gets the answers ctx.data gives for it', async () => {
  const cases: Record<string, unknown>[] = [
    { title: 7 },
    { status: 'maybe' },
    { due: 'tomorrow' },
    { nope: 1 },
    { id: 'mine' },
    { who: 'row_doesnotexist000000000' },
    { title: 'dup' },
  ];
  await h.call('POST', '/create', { host: app.host, body: { title: 'dup' } });
  for (const body of cases) {
    const fromApp = await h.call('POST', '/create', { host: app.host, body });
    const fromConsole = await h.call('POST', `/v0/apps/${app.appId}/data/tasks`, {
      key: owner.api_key,
      body,
    });
    assert.ok(fromConsole.status >= 400 && fromConsole.status < 500, JSON.stringify(body));
    assert.is(
      fromConsole.body.error.code,
      fromApp.body.code,
      `${JSON.stringify(body)}: the same code`,
    );
    assert.is(
      fromConsole.body.error.message,
      fromApp.body.message,
      `${JSON.stringify(body)}: the same message`,
    );
  }
  const undeclared = await h.call('GET', `/v0/apps/${app.appId}/data/nothing`, {
    key: owner.api_key,
  });
  assert.is(undeclared.status, 400);
  assert.is(undeclared.body.error.code, 'collection_not_declared');
});

test('pages newest first by cursor, oldest first on request, filtered by where', async () => {
  const person = await h.api('POST /v0/apps/{app_id}/data/{collection}', {
    key: owner.api_key,
    params: { app_id: app.appId, collection: 'people' },
    body: { name: 'Ada' },
  });
  for (let i = 0; i < 7; i++)
    await h.api('POST /v0/apps/{app_id}/data/{collection}', {
      key: owner.api_key,
      params,
      body: { title: `page ${i}`, status: i % 2 ? 'done' : 'open', who: person.id, meta: { i } },
    });
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await h.api('GET /v0/apps/{app_id}/data/{collection}', {
      key: owner.api_key,
      params,
      query: { limit: '3', ...(cursor ? { cursor } : {}) },
    });
    seen.push(...page.rows.map((r) => String(r.title)));
    cursor = page.cursor ?? undefined;
  } while (cursor);
  const fromApp = (await h.call('GET', '/list', { host: app.host })).body as { title: string }[];
  assert.equal(seen, fromApp.map((r) => r.title).reverse(), 'every row once, newest first');
  const oldest = await h.api('GET /v0/apps/{app_id}/data/{collection}', {
    key: owner.api_key,
    params,
    query: { order: 'oldest', limit: '2' },
  });
  assert.equal(
    oldest.rows.map((r) => r.title),
    fromApp.slice(0, 2).map((r) => r.title),
  );
  const done = await h.api('GET /v0/apps/{app_id}/data/{collection}', {
    key: owner.api_key,
    params,
    query: { where: JSON.stringify({ status: 'done' }) },
  });
  assert.equal(
    done.rows.map((r) => r.title),
    ['page 5', 'page 3', 'page 1'],
  );
  const bad = await h.call(
    'GET',
    `/v0/apps/${app.appId}/data/tasks?where=${encodeURIComponent('{"nope":1}')}`,
    {
      key: owner.api_key,
    },
  );
  assert.is(bad.status, 400);
  assert.is(bad.body.error.code, 'unknown_field');
  const notJson = await h.call('GET', `/v0/apps/${app.appId}/data/tasks?where=%7Bx`, {
    key: owner.api_key,
  });
  assert.is(notJson.status, 400);
});

test('a change from the console is what app code reads, and an event names who made it', async () => {
  const row = await h.api('POST /v0/apps/{app_id}/data/{collection}', {
    key: roles.developer.api_key,
    params,
    body: { title: 'edit me', status: 'open' },
  });
  const changed = await h.api('PATCH /v0/apps/{app_id}/data/{collection}/{row_id}', {
    key: roles.developer.api_key,
    params: { ...params, row_id: row.id },
    body: { status: 'done', title: null },
  });
  assert.is(changed.status, 'done');
  assert.not.ok('title' in changed, 'null clears a field');
  const listed = (await h.call('GET', '/list', { host: app.host })).body as {
    id: string;
    status: string;
  }[];
  assert.is(listed.find((r) => r.id === row.id)?.status, 'done');
  const read = await h.api('GET /v0/apps/{app_id}/data/{collection}/{row_id}', {
    key: roles.viewer.api_key,
    params: { ...params, row_id: row.id },
  });
  assert.equal(read, changed, 'a viewer reads the row as it is now');
  await h.api('DELETE /v0/apps/{app_id}/data/{collection}/{row_id}', {
    key: roles.developer.api_key,
    params: { ...params, row_id: row.id },
  });
  const gone = await h.call('GET', `/v0/apps/${app.appId}/data/tasks/${row.id}`, {
    key: owner.api_key,
  });
  assert.is(gone.status, 404);
  const again = await h.call('DELETE', `/v0/apps/${app.appId}/data/tasks/${row.id}`, {
    key: owner.api_key,
  });
  assert.is(again.status, 404);

  const events = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params: { app_id: app.appId },
    query: { type: 'data.row_deleted' } as never,
  });
  const mine = events.events.filter((e) => (e.metadata as { row_id?: string }).row_id === row.id);
  assert.is(mine.length, 1);
  assert.match(mine[0]!.message, /developer-/);
  const all = await h.api('GET /v0/apps/{app_id}/events', {
    key: owner.api_key,
    params: { app_id: app.appId },
  });
  const types = all.events
    .filter((e) => (e.metadata as { row_id?: string }).row_id === row.id)
    .map((e) => e.type)
    .sort();
  assert.equal(types, ['data.row_created', 'data.row_deleted', 'data.row_updated']);
});

test('an unpublished app has no collections to browse, and says why', async () => {
  const gone = await publishServerApp(
    h,
    owner.api_key,
    'export default { fetch: () => new Response("x") };',
    {
      resources,
    },
  );
  await h.api('DELETE /v0/apps/{app_id}', { key: owner.api_key, params: { app_id: gone.appId } });
  const r = await h.call('GET', `/v0/apps/${gone.appId}/data/tasks`, { key: owner.api_key });
  assert.is(r.status, 400, r.text);
  assert.is(r.body.error.code, 'collection_not_declared');
  assert.match(r.body.error.message, /no live release/);
});

test.after(() => h.close());
test.run();
