import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const u = await newUser(h);
const key = u.api_key;

// A tiny RPC over ctx.data, so tests drive the real sandbox API.
const RPC = `export default { async fetch(req, ctx) {
  const { op, collection, args } = await req.json();
  try {
    const c = ctx.data.collection(collection);
    return Response.json({ ok: await c[op](...args) });
  } catch (e) {
    return Response.json({ error: { code: e.code, message: e.message, name: e.name } }, { status: 400 });
  }
} };`;

const DATA = {
  auth: { mode: 'app_users' },
  data: {
    collections: {
      people: {
        fields: {
          email: 'string',
          age: 'integer',
          score: 'number',
          active: 'boolean',
          born: 'datetime',
          meta: 'json',
          bio: 'richtext',
          level: { type: 'enum', values: ['junior', 'senior'] },
        },
        indexes: [
          { name: 'by_email', fields: ['email'], unique: true },
          { name: 'by_level', fields: ['level'] },
        ],
      },
      notes: { fields: { title: 'string', author: { type: 'reference', collection: 'people' } } },
    },
  },
};

async function dataApp() {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', RPC, 'text/javascript')],
    resources: DATA,
  });
  const r = await h.call('PUT', '/v0/apps', { key, body });
  assert.is(r.body.status, 'published', r.text);
  const host = `${r.body.app_id}.apps.localhost`;
  const rpc = async (op: string, collection: string, ...args: unknown[]) => {
    const res = await h.call('POST', '/rpc', { host, body: { op, collection, args } });
    return res.body as { ok?: any; error?: { code: string; message: string; name: string } };
  };
  return { appId: r.body.app_id as string, rpc };
}

test('create, get, update, list and soft delete return declared fields plus id and timestamps', async () => {
  const { appId, rpc } = await dataApp();
  const created = (
    await rpc('create', 'people', {
      email: 'a@x.io',
      age: 30,
      level: 'junior',
      born: '1990-01-02T03:04:05+02:00',
      meta: { k: [1] },
    })
  ).ok;
  assert.match(created.id, /^row_/);
  assert.equal(Object.keys(created).sort(), [
    'age',
    'born',
    'created_at',
    'email',
    'id',
    'level',
    'meta',
    'updated_at',
  ]);
  assert.is(created.born, '1990-01-02T01:04:05.000Z', 'datetimes are normalised to UTC ISO 8601');
  assert.equal((await rpc('get', 'people', created.id)).ok, created);
  const updated = (
    await rpc('update', 'people', created.id, { age: 31, level: 'senior', meta: null })
  ).ok;
  assert.is(updated.age, 31);
  assert.is(updated.email, 'a@x.io');
  assert.is(updated.meta, undefined, 'null clears a field');
  assert.ok(Date.parse(updated.updated_at) >= Date.parse(created.updated_at));
  assert.is(updated.created_at, created.created_at);
  assert.equal(
    (await rpc('list', 'people', {})).ok.map((r: any) => r.id),
    [created.id],
  );
  assert.equal((await rpc('delete', 'people', created.id)).ok, { deleted: true });
  assert.is((await rpc('get', 'people', created.id)).ok, null);
  assert.equal((await rpc('list', 'people', {})).ok, []);
  assert.equal((await rpc('delete', 'people', created.id)).ok, { deleted: false });
  const row = await h.deps.db
    .selectFrom('app_rows')
    .select(['deleted_at'])
    .where('app_id', '=', appId)
    .where('id', '=', created.id)
    .executeTakeFirst();
  assert.ok(row?.deleted_at, 'soft delete keeps the row with deleted_at');
  assert.is((await rpc('update', 'people', created.id, { age: 1 })).error?.code, 'not_found');
});

test('values are checked against the declared types; errors are catchable with stable codes', async () => {
  const { rpc } = await dataApp();
  const bad: [Record<string, unknown>, string][] = [
    [{ age: 1.5 }, 'invalid_value'],
    [{ age: '3' }, 'invalid_value'],
    [{ score: 'x' }, 'invalid_value'],
    [{ active: 'yes' }, 'invalid_value'],
    [{ born: 'yesterday' }, 'invalid_value'],
    [{ born: '2026-13-45T00:00:00Z' }, 'invalid_value'],
    [{ level: 'boss' }, 'invalid_value'],
    [{ email: 5 }, 'invalid_value'],
    [{ nickname: 'x' }, 'unknown_field'],
    [{ id: 'row_x' }, 'reserved_field'],
    [{ created_at: '2026-01-01T00:00:00Z' }, 'reserved_field'],
  ];
  for (const [fields, code] of bad) {
    const r = await rpc('create', 'people', fields);
    assert.is(r.error?.code, code, JSON.stringify(fields));
    assert.is(r.error?.name, 'PlatformError');
  }
  assert.ok(
    (
      await rpc('create', 'people', {
        score: 2.5,
        active: false,
        bio: '<b>x</b>',
        meta: [1, { a: null }],
      })
    ).ok.id,
  );
  assert.is((await rpc('create', 'ghosts', {})).error?.code, 'collection_not_declared');
  assert.is((await rpc('list', 'people', { limit: 0 })).error?.code, 'invalid_query');
  assert.is((await rpc('list', 'people', { limit: 1001 })).error?.code, 'invalid_query');
  assert.is((await rpc('list', 'people', { where: { meta: {} } })).error?.code, 'invalid_query');
  assert.is((await rpc('list', 'people', { where: { nope: 1 } })).error?.code, 'unknown_field');
});

test('references must name an existing row of the target collection of the same app', async () => {
  const a = await dataApp();
  const b = await dataApp();
  const person = (await a.rpc('create', 'people', { email: 'p@x.io' })).ok;
  assert.ok((await a.rpc('create', 'notes', { title: 't', author: person.id })).ok.id);
  const theirs = (await b.rpc('create', 'people', { email: 'q@x.io' })).ok;
  assert.is(
    (await a.rpc('create', 'notes', { title: 't', author: theirs.id })).error?.code,
    'reference_not_found',
    "another app's row",
  );
  const note = (await a.rpc('create', 'notes', { title: 'n' })).ok;
  assert.is(
    (await a.rpc('create', 'notes', { author: note.id })).error?.code,
    'reference_not_found',
    'a row of another collection',
  );
  await a.rpc('delete', 'people', person.id);
  assert.is(
    (await a.rpc('create', 'notes', { author: person.id })).error?.code,
    'reference_not_found',
    'a deleted row',
  );
});

test('unique indexes hold under concurrent writes, per app; a deleted row frees its value', async () => {
  const a = await dataApp();
  const results = await Promise.all(
    Array.from({ length: 16 }, () => a.rpc('create', 'people', { email: 'same@x.io' })),
  );
  assert.is(results.filter((r) => r.ok).length, 1);
  assert.ok(results.filter((r) => !r.ok).every((r) => r.error?.code === 'unique_violation'));
  const winner = results.find((r) => r.ok)!.ok;
  const other = (await a.rpc('create', 'people', { email: 'other@x.io' })).ok;
  assert.is(
    (await a.rpc('update', 'people', other.id, { email: 'same@x.io' })).error?.code,
    'unique_violation',
  );
  assert.ok(
    (await a.rpc('update', 'people', winner.id, { age: 2 })).ok,
    'updating other fields keeps its own key',
  );
  assert.ok(
    (await a.rpc('create', 'people', { age: 1 })).ok &&
      (await a.rpc('create', 'people', { age: 2 })).ok,
    'nulls do not collide',
  );
  const b = await dataApp();
  assert.ok((await b.rpc('create', 'people', { email: 'same@x.io' })).ok, 'unique per app');
  await a.rpc('delete', 'people', winner.id);
  assert.ok(
    (await a.rpc('create', 'people', { email: 'same@x.io' })).ok,
    'the value is free again',
  );
});

test('list: equality on declared fields, bounded limit, stable order, scoped to the app', async () => {
  const a = await dataApp();
  const b = await dataApp();
  const ids: string[] = [];
  for (let i = 0; i < 6; i++)
    ids.push(
      (
        await a.rpc('create', 'people', {
          email: `p${i}@x.io`,
          level: i % 2 ? 'senior' : 'junior',
          age: i,
        })
      ).ok.id,
    );
  await b.rpc('create', 'people', { email: 'b@x.io', level: 'senior' });
  const seniors = (await a.rpc('list', 'people', { where: { level: 'senior' } })).ok;
  assert.equal(
    seniors.map((r: any) => r.id),
    [ids[1], ids[3], ids[5]],
    'oldest first by created_at, then id',
  );
  assert.equal(
    (await a.rpc('list', 'people', { where: { level: 'senior', age: 3 } })).ok.map(
      (r: any) => r.id,
    ),
    [ids[3]],
  );
  assert.equal(
    (await a.rpc('list', 'people', { limit: 2 })).ok.map((r: any) => r.id),
    ids.slice(0, 2),
  );
  assert.is(
    (await a.rpc('list', 'people', { where: { email: 'b@x.io' } })).ok.length,
    0,
    "another app's rows are invisible",
  );
  // Index entries follow updates and deletes.
  await a.rpc('update', 'people', ids[0]!, { level: 'senior' });
  assert.equal(
    (await a.rpc('list', 'people', { where: { level: 'senior' } })).ok.map((r: any) => r.id),
    [ids[0], ids[1], ids[3], ids[5]],
  );
  await a.rpc('delete', 'people', ids[3]!);
  assert.equal(
    (await a.rpc('list', 'people', { where: { level: 'senior' } })).ok.map((r: any) => r.id),
    [ids[0], ids[1], ids[5]],
  );
  assert.equal(
    (await a.rpc('list', 'people', { where: { level: 'junior' } })).ok.map((r: any) => r.id),
    [ids[2], ids[4]],
  );
  await a.rpc('update', 'people', ids[2]!, { level: null });
  assert.equal(
    (await a.rpc('list', 'people', { where: { level: null } })).ok.map((r: any) => r.id),
    [ids[2]],
    'null filters find cleared fields',
  );
  // Unindexed equality works too (a scan; declare an index for large collections).
  assert.equal(
    (await a.rpc('list', 'people', { where: { age: 4 } })).ok.map((r: any) => r.id),
    [ids[4]],
  );
});

test('rows live in one shared table scoped by app_id (no table per app)', async () => {
  const tables = await sql<{
    n: number;
  }>`select count(*)::int as n from information_schema.tables where table_schema = 'public' and table_name like 'app_rows%'`.execute(
    h.deps.db,
  );
  assert.is(tables.rows[0]!.n, 1);
});

test('a list whose rows would pass 8 MiB of JSON is refused (payload_too_large), not read whole; fewer rows are answered', async () => {
  const { rpc } = await dataApp();
  for (let i = 0; i < 10; i++)
    assert.ok(
      (await rpc('create', 'notes', { title: `${i}`.padEnd(1_000_000, 'y') })).ok,
      `row ${i}`,
    );
  const all = await rpc('list', 'notes', { limit: 100 });
  assert.is(all.error?.code, 'payload_too_large', JSON.stringify(all.error));
  const some = await rpc('list', 'notes', { limit: 5 });
  assert.equal(
    some.ok?.map((r: any) => r.title[0]),
    ['0', '1', '2', '3', '4'],
  );
});

test.after(() => h.close());
test.run();
