import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRow } from '../../src/data/service.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const RULES = ['server_only', 'public', 'authenticated', 'owner', 'role:editor'] as const;
const collections = Object.fromEntries(
  RULES.map((r) => [
    r.replace(/[_:]/g, '-'),
    { fields: { title: 'string' }, access: { read: r, write: r } },
  ]),
);
const resources = {
  auth: { mode: 'app_users', public_signup: true, roles: ['editor'] },
  data: { collections },
};
const pub = (await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site({ resources }) }))
  .body;
const host = `${pub.app_id}.apps.localhost`;
const manifest = (
  await h.deps.db
    .selectFrom('releases')
    .select('manifest')
    .where('id', '=', pub.release_id)
    .executeTakeFirstOrThrow()
).manifest as any;

async function signup(email: string) {
  const r = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email, password: 'a long password' },
  });
  return { id: r.body.user.id as string, cookie: r.headers.get('set-cookie')!.split(';')[0]! };
}
const A = await signup('a@example.com'); // creates the fixture rows
const B = await signup('b@example.com'); // another user, no role
const C = await signup('c@example.com'); // holds the role
await h.deps.db
  .updateTable('app_users')
  .set({ roles: JSON.stringify(['editor']) })
  .where('id', '=', C.id)
  .execute();
const callers = {
  anonymous: undefined,
  creator: A.cookie,
  other: B.cookie,
  editor: C.cookie,
} as const;

/** Expected status per rule, caller and operation; "hidden" = the list answers 200 without A's row. */
const EXPECT: Record<
  (typeof RULES)[number],
  Record<
    keyof typeof callers,
    [list: number | 'hidden', get: number, create: number, update: number, del: number]
  >
> = {
  server_only: {
    anonymous: [404, 404, 404, 404, 404],
    creator: [404, 404, 404, 404, 404],
    other: [404, 404, 404, 404, 404],
    editor: [404, 404, 404, 404, 404],
  },
  public: {
    anonymous: [200, 200, 201, 200, 200],
    creator: [200, 200, 201, 200, 200],
    other: [200, 200, 201, 200, 200],
    editor: [200, 200, 201, 200, 200],
  },
  authenticated: {
    anonymous: [401, 401, 401, 401, 401],
    creator: [200, 200, 201, 200, 200],
    other: [200, 200, 201, 200, 200],
    editor: [200, 200, 201, 200, 200],
  },
  owner: {
    anonymous: [401, 401, 401, 401, 401],
    creator: [200, 200, 201, 200, 200],
    other: ['hidden', 404, 201, 404, 404],
    editor: ['hidden', 404, 201, 404, 404],
  },
  'role:editor': {
    anonymous: [401, 401, 401, 401, 401],
    creator: [403, 403, 403, 403, 403],
    other: [403, 403, 403, 403, 403],
    editor: [200, 200, 201, 200, 200],
  },
};

test('every cell of the access matrix (read and write rules × callers × operations)', async () => {
  for (const rule of RULES) {
    const coll = rule.replace(/[_:]/g, '-');
    for (const [caller, cookie] of Object.entries(callers) as [
      keyof typeof callers,
      string | undefined,
    ][]) {
      const [list, get, create, update, del] = EXPECT[rule][caller];
      const row = await createRow(
        h.deps,
        {
          appId: pub.app_id,
          accountId: pub.account_id,
          releaseId: pub.release_id,
          manifest,
          actorUserId: A.id,
        },
        coll,
        { title: 'by A' },
      );
      const headers = cookie ? { cookie, origin: `http://${host}` } : undefined; // as a browser sends it from the app's own page
      const label = `${rule} / ${caller}`;
      const l = await h.call('GET', `/_platform/data/${coll}`, { host, headers });
      if (list === 'hidden') {
        assert.is(l.status, 200, `${label}: list`);
        assert.not.ok(
          l.body.rows.some((r: any) => r.id === row.id),
          `${label}: A's row is hidden`,
        );
      } else {
        assert.is(l.status, list, `${label}: list`);
        if (list === 200)
          assert.ok(
            l.body.rows.some((r: any) => r.id === row.id),
            `${label}: list shows the row`,
          );
      }
      assert.is(
        (await h.call('GET', `/_platform/data/${coll}/${row.id}`, { host, headers })).status,
        get,
        `${label}: get`,
      );
      const c = await h.call('POST', `/_platform/data/${coll}`, {
        host,
        headers,
        body: { title: 'new' },
      });
      assert.is(c.status, create, `${label}: create`);
      assert.is(
        (
          await h.call('PATCH', `/_platform/data/${coll}/${row.id}`, {
            host,
            headers,
            body: { title: 'edited' },
          })
        ).status,
        update,
        `${label}: update`,
      );
      assert.is(
        (await h.call('DELETE', `/_platform/data/${coll}/${row.id}`, { host, headers })).status,
        del,
        `${label}: delete`,
      );
      if (c.status === 201 && rule === 'owner') {
        // The creator of a row sees it; nobody else does.
        assert.is(
          (await h.call('GET', `/_platform/data/${coll}/${c.body.id}`, { host, headers })).status,
          200,
        );
        assert.is(
          (
            await h.call('GET', `/_platform/data/${coll}/${c.body.id}`, {
              host,
              headers: caller === 'creator' ? { cookie: B.cookie } : { cookie: A.cookie },
            })
          ).status,
          404,
        );
      }
    }
  }
});

test('the default when access is absent is server_only', async () => {
  const r = await h.call('PUT', '/v0/apps', {
    key: owner.api_key,
    body: site({ resources: { data: { collections: { plain: { fields: { t: 'string' } } } } } }),
  });
  const res = await h.call('GET', '/_platform/data/plain', {
    host: `${r.body.app_id}.apps.localhost`,
  });
  assert.is(res.status, 404);
  assert.is((await h.call('GET', '/_platform/data/undeclared', { host })).status, 404);
});

test('list: equality filters typed from the query string, cursor paging, bounds; cross-site writes refused', async () => {
  for (let i = 0; i < 5; i++)
    await h.call('POST', '/_platform/data/public', {
      host,
      body: { title: i % 2 ? 'odd' : 'even' },
    });
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await h.call(
      'GET',
      `/_platform/data/public?title=even&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      { host },
    );
    assert.is(page.status, 200);
    seen.push(...page.body.rows.map((r: any) => r.id));
    cursor = page.body.cursor;
  } while (cursor);
  const all = (
    await h.call('GET', '/_platform/data/public?title=even&limit=100', { host })
  ).body.rows.map((r: any) => r.id);
  assert.equal(seen, all);
  assert.ok(all.length >= 3);
  assert.is((await h.call('GET', '/_platform/data/public?limit=101', { host })).status, 400);
  assert.is((await h.call('GET', '/_platform/data/public?cursor=zzz', { host })).status, 400);
  assert.is((await h.call('GET', '/_platform/data/public?nope=1', { host })).status, 400);
  const evil = await h.call('POST', '/_platform/data/public', {
    host,
    body: { title: 'x' },
    headers: { origin: 'https://evil.example' },
  });
  assert.is(evil.status, 403);
  const badType = await h.call('POST', '/_platform/data/public', { host, body: { title: 5 } });
  assert.is(badType.status, 400);
  assert.is(badType.body.error.code, 'invalid_value');
});

test('a page stops before 8 MiB of rows, and its cursor leads on to the rest', async () => {
  // after the few small rows the matrix left in the public collection
  for (let i = 0; i < 10; i++)
    await createRow(
      h.deps,
      { appId: pub.app_id, accountId: pub.account_id, releaseId: pub.release_id, manifest },
      'public',
      {
        title: `${i}`.padEnd(1_000_000, 'y'),
      },
    );
  const big = (rows: any[]) => rows.filter((r) => r.title.length > 1000).map((r) => r.title[0]);
  const first = await h.call('GET', '/_platform/data/public?limit=100', { host });
  assert.is(first.status, 200, first.text.slice(0, 200));
  assert.equal(
    big(first.body.rows),
    ['0', '1', '2', '3', '4', '5', '6', '7'],
    'eight rows of 1 MB fit, the ninth would not',
  );
  assert.type(first.body.cursor, 'string');
  const rest = await h.call(
    'GET',
    `/_platform/data/public?limit=100&cursor=${encodeURIComponent(first.body.cursor)}`,
    { host },
  );
  assert.equal(big(rest.body.rows), ['8', '9']);
  assert.is(rest.body.rows.length, 2);
  assert.is(rest.body.cursor, null);
});

test.after(() => h.close());
test.run();
