/**
 * A write made by a request that began under the release before a publish, and commits after the
 * new release went live, keeps the new release's indexes: it claims the unique index the new
 * release declares again and is found through the index it adds. Without that, the row would slip
 * past the rebuild the publish made from the rows already stored. A preview writing the data it
 * shares with the live release keeps the live release's indexes as well.
 */
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp, waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { lockApp } from '../../src/apps/queries.ts';

const h = await createHarness();
const key = (await newUser(h)).api_key;

// `/hold` says it has begun (a `waiting` row), waits for a `gate` row, then writes a person.
const SOURCE = `export default {
  async fetch(request, ctx) {
    const url = new URL(request.url);
    const email = url.searchParams.get('email');
    await ctx.data.collection('waiting').create({ email });
    for (let i = 0; i < 1000; i++) {
      const open = await ctx.data.collection('gate').list({ where: { email }, limit: 1 });
      if (open.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    try {
      const row = await ctx.data.collection('people').create({ email, team: 'red' });
      return Response.json(row, { status: 201 });
    } catch (err) {
      return Response.json({ code: err.code }, { status: 409 });
    }
  },
};`;

const collections = (peopleIndexes: unknown[]) => ({
  data: {
    collections: {
      people: { fields: { email: 'string', team: 'string' }, indexes: peopleIndexes },
      waiting: { fields: { email: 'string' } },
      gate: { fields: { email: 'string' } },
    },
  },
});
const UNIQUE = { name: 'by_email', fields: ['email'], unique: true };
const BY_TEAM = { name: 'by_team', fields: ['team'] };

const app = await publishServerApp(h, key, SOURCE, { resources: collections([UNIQUE]) });
const rows = (c: string) => `/v0/apps/${app.appId}/data/${c}`;

async function listed(collection: string, where: Record<string, unknown>) {
  const r = await h.call(
    'GET',
    `${rows(collection)}?where=${encodeURIComponent(JSON.stringify(where))}`,
    { key },
  );
  assert.is(r.status, 200, r.text);
  return r.body.rows as { id: string; email: string }[];
}

/** Publishes the same code declaring `indexes` on people; asserts it went live. */
async function publishWith(indexes: unknown[]) {
  const r = await h.call('PUT', `/v0/apps/${app.appId}`, {
    key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [file('public/index.html', 'static'), file('server.js', SOURCE, 'text/javascript')],
      resources: collections(indexes),
    }),
  });
  assert.is(r.body.activation?.status, 'live', r.text);
  return r.body.release_id as string;
}

test('a write begun under the old release claims and enters the indexes the new one adds', async () => {
  await publishWith([]); // leaving the unique index out is compatible; it stays provisioned
  const email = 'held@example.com';
  const held = h.call('GET', `/hold?email=${encodeURIComponent(email)}`, { host: app.host });
  await waitFor(async () => (await listed('waiting', { email })).length > 0);

  await publishWith([UNIQUE, BY_TEAM]);
  const opened = await h.call('POST', rows('gate'), { key, body: { email } });
  assert.is(opened.status, 201, opened.text);
  const answer = await held;
  assert.is(answer.status, 201, answer.text);
  const heldId = answer.body.id as string;

  // the row is found through the index the new release added
  const red = await listed('people', { team: 'red' });
  assert.equal(
    red.map((r) => r.id),
    [heldId],
  );
  // and it holds the unique key the new release added
  const twin = await h.call('POST', rows('people'), { key, body: { email, team: 'blue' } });
  assert.is(twin.status, 409, twin.text);
  assert.is(twin.body.error.code, 'unique_violation');
});

test('a write waits while a release is going live (the app row locked as publish locks it)', async () => {
  const row = (await listed('people', { team: 'red' }))[0]!;
  let answered = false;
  let update: ReturnType<typeof h.call> | undefined;
  await h.deps.db.transaction().execute(async (trx) => {
    await lockApp(trx, app.appId);
    update = h
      .call('PATCH', `${rows('people')}/${row.id}`, { key, body: { team: 'green' } })
      .finally(() => (answered = true));
    // the write's backend waits for this lock (an update takes no other lock on the app row)
    await waitFor(async () => {
      const { rows: waiting } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'
          and query ilike '%live_release_id%for key share%'`.execute(h.deps.db);
      return waiting[0]!.n > 0;
    });
    assert.is(answered, false);
  });
  const changed = await update!;
  assert.is(changed.status, 200, changed.text);
  assert.is(changed.body.team, 'green');
  assert.equal(
    (await listed('people', { team: 'green' })).map((r) => r.id),
    [row.id],
  );
});

test("a preview that leaves out the live release's unique index still honours it", async () => {
  const p = await h.call('PUT', `/v0/apps/${app.appId}?preview=true`, {
    key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [file('public/index.html', 'static'), file('server.js', SOURCE, 'text/javascript')],
      resources: collections([]),
    }),
  });
  assert.is(p.status, 200, p.text);
  const previewHost = `${app.appId}--${(p.body.release_id as string).slice(4)}.apps.localhost`;
  const entry = new URL(p.body.preview.url);
  const enter = await h.call('GET', `${entry.pathname}${entry.search}`, { host: previewHost });
  assert.is(enter.status, 303, enter.text);
  const cookie = enter.headers.get('set-cookie')!.split(';')[0]!;
  const write = async (email: string) => {
    assert.is((await h.call('POST', rows('gate'), { key, body: { email } })).status, 201);
    return h.call('GET', `/hold?email=${encodeURIComponent(email)}`, {
      host: previewHost,
      headers: { cookie },
    });
  };

  const duplicate = await write('held@example.com');
  assert.is(duplicate.status, 409, duplicate.text);
  assert.is(duplicate.body.code, 'unique_violation');
  const fresh = await write('preview@example.com');
  assert.is(fresh.status, 201, fresh.text);
  // in the live release's index as well
  const red = await listed('people', { team: 'red' });
  assert.ok(red.some((r) => r.id === fresh.body.id));
});

test.after(() => h.close());
test.run();
