import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fanOutSchedules, periodStart } from '../../src/jobs/schedules.ts';
import {
  pruneAuthMaterial,
  pruneDeletedData,
  pruneEvents,
  pruneReleases,
  RELEASES_KEEP_NEWEST,
} from '../../worker/tasks/retention.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;

const scheduledApp = (jobs: Record<string, unknown>) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file('server.js', 'export default { job() {} };', 'text/javascript'),
    ],
    resources: { jobs },
  });
const enqueuedFor = async (appId: string) =>
  (
    await sql<{
      job_name: string;
      period_start: Date;
    }>`select job_name, period_start from app_schedule_runs where app_id = ${appId} order by period_start, job_name`.execute(
      h.deps.db,
    )
  ).rows.map((r) => `${r.job_name}@${r.period_start.toISOString().slice(11, 16)}`);

test('periods are UTC boundaries', () => {
  const t = new Date('2026-11-21T10:37:42Z');
  assert.is(periodStart('every_15_minutes', t).toISOString(), '2026-11-21T10:30:00.000Z');
  assert.is(periodStart('hourly', t).toISOString(), '2026-11-21T10:00:00.000Z');
  assert.is(periodStart('daily', t).toISOString(), '2026-11-21T00:00:00.000Z');
});

test('each period of each scheduled job is enqueued once; downtime runs the current period once', async () => {
  const a = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: scheduledApp({
        quarter: { trigger: 'schedule', schedule: 'every_15_minutes' },
        hour: { trigger: 'schedule', schedule: 'hourly' },
        day: { trigger: 'schedule', schedule: 'daily' },
        manual: {},
      }),
    })
  ).body;
  await fanOutSchedules(h.deps, new Date('2026-11-21T10:07:00Z'));
  assert.equal(await enqueuedFor(a.app_id), ['day@00:00', 'hour@10:00', 'quarter@10:00']);
  await fanOutSchedules(h.deps, new Date('2026-11-21T10:08:00Z'));
  assert.equal((await enqueuedFor(a.app_id)).length, 3, 'the next minute adds nothing');
  await fanOutSchedules(h.deps, new Date('2026-11-21T10:15:00Z'));
  assert.ok((await enqueuedFor(a.app_id)).includes('quarter@10:15'));
  // Three hours of downtime: one run for the current periods, not one per missed tick.
  await fanOutSchedules(h.deps, new Date('2026-11-21T13:31:00Z'));
  const all = await enqueuedFor(a.app_id);
  assert.equal(
    all.filter((x) => x.startsWith('hour@')),
    ['hour@10:00', 'hour@13:00'],
  );
  assert.equal(
    all.filter((x) => x.startsWith('quarter@')),
    ['quarter@10:00', 'quarter@10:15', 'quarter@13:30'],
  );
  const jobs = await sql<{
    n: number;
  }>`select count(*)::int as n from graphile_worker._private_jobs where payload->>'app_id' = ${a.app_id} and payload->>'source' = 'schedule'`.execute(
    h.deps.db,
  );
  assert.is(jobs.rows[0]!.n, all.length, 'one graphile job per claimed period');
  const ev = await h.call('GET', `/v0/apps/${a.app_id}/events?type=job.enqueued`, { key });
  assert.is(ev.body.events.length, all.length);
});

test('two workers ticking at the same time enqueue each period once', async () => {
  const a = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: scheduledApp({ hour: { trigger: 'schedule', schedule: 'hourly' } }),
    })
  ).body;
  const t = new Date('2026-11-22T08:00:30Z');
  const counts = await Promise.all([
    fanOutSchedules(h.deps, t),
    fanOutSchedules(h.deps, t),
    fanOutSchedules(h.deps, t),
  ]);
  assert.equal(await enqueuedFor(a.app_id), ['hour@08:00']);
  assert.ok(counts.reduce((x, y) => x + y, 0) >= 1);
});

test('the schedule set follows the live release: a new release or a rollback changes it', async () => {
  const v1 = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: scheduledApp({ hour: { trigger: 'schedule', schedule: 'hourly' } }),
    })
  ).body;
  const v2 = await h.call('PUT', `/v0/apps/${v1.app_id}`, {
    key,
    body: scheduledApp({
      hour: { trigger: 'schedule', schedule: 'hourly' },
      extra: { trigger: 'schedule', schedule: 'hourly' },
    }),
  });
  assert.is(v2.body.status, 'published');
  await fanOutSchedules(h.deps, new Date('2026-11-23T01:05:00Z'));
  assert.equal(await enqueuedFor(v1.app_id), ['extra@01:00', 'hour@01:00']);
  await h.call('POST', `/v0/apps/${v1.app_id}/rollback`, {
    key,
    body: { release_id: v1.release_id },
  });
  await fanOutSchedules(h.deps, new Date('2026-11-23T02:05:00Z'));
  assert.equal(
    (await enqueuedFor(v1.app_id)).filter((x) => x.endsWith('@02:00')),
    ['hour@02:00'],
  );
  await h.call('DELETE', `/v0/apps/${v1.app_id}`, { key });
  await fanOutSchedules(h.deps, new Date('2026-11-23T03:05:00Z'));
  assert.equal(
    (await enqueuedFor(v1.app_id)).filter((x) => x.endsWith('@03:00')),
    [],
    'unpublished apps are not scheduled',
  );
});

test('event retention follows the plan (Free: 1 day) and is idempotent', async () => {
  const a = (await h.call('PUT', '/v0/apps', { key, body: site() })).body;
  await sql`update app_events set created_at = now() - interval '2 days' where app_id = ${a.app_id} and type = 'release.created'`.execute(
    h.deps.db,
  );
  const r1 = await pruneEvents(h.deps);
  assert.ok(r1.events >= 1);
  const left = (
    await h.api('GET /v0/apps/{app_id}/events', { key, params: { app_id: a.app_id } })
  ).events.map((e) => e.type);
  assert.not.ok(left.includes('release.created'));
  assert.ok(left.includes('release.activated'), 'recent events stay');
  const r2 = await pruneEvents(h.deps);
  assert.is(r2.events, 0);
  // A Business account keeps 30 days.
  await sql`update accounts set plan_key = 'business' where id = ${u.account_id}`.execute(
    h.deps.db,
  );
  await sql`update app_events set created_at = now() - interval '10 days' where app_id = ${a.app_id}`.execute(
    h.deps.db,
  );
  assert.is((await pruneEvents(h.deps)).events, 0);
  await sql`update accounts set plan_key = 'free' where id = ${u.account_id}`.execute(h.deps.db);
});

test('release retention keeps the live release, the newest ones and the recent ones; unused bytes go', async () => {
  const owner = await newUser(h);
  const first = (
    await h.call('PUT', '/v0/apps', {
      key: owner.api_key,
      body: site({ files: [file('public/index.html', 'release 0')] }),
    })
  ).body;
  const ids = [first.release_id];
  for (let i = 1; i < RELEASES_KEEP_NEWEST + 5; i++) {
    ids.push(
      (
        await h.call('PUT', `/v0/apps/${first.app_id}`, {
          key: owner.api_key,
          body: site({ files: [file('public/index.html', `release ${i}`)] }),
        })
      ).body.release_id,
    );
  }
  // Everything is old; roll back to the very first release so it is live.
  await sql`update releases set created_at = now() - interval '60 days' where app_id = ${first.app_id}`.execute(
    h.deps.db,
  );
  // and no publish has used their bytes for as long (a blob used within the grace period stays)
  await sql`update blobs set last_used_at = now() - interval '60 days' where account_id = ${owner.account_id}`.execute(
    h.deps.db,
  );
  await h.call('POST', `/v0/apps/${first.app_id}/rollback`, {
    key: owner.api_key,
    body: { release_id: first.release_id },
  });
  const blobsBefore = (
    await h.deps.db
      .selectFrom('blobs')
      .select('sha256')
      .where('account_id', '=', owner.account_id)
      .execute()
  ).length;
  const r = await pruneReleases(h.deps);
  assert.is(r.failed, 0);
  const kept = (
    await h.api('GET /v0/apps/{app_id}/releases', {
      key: owner.api_key,
      params: { app_id: first.app_id },
    })
  ).releases.map((x) => x.release_id);
  assert.is(kept.length, RELEASES_KEEP_NEWEST + 1);
  assert.ok(kept.includes(first.release_id), 'the live release is never pruned');
  assert.equal(kept.slice(0, RELEASES_KEEP_NEWEST), ids.slice(-RELEASES_KEEP_NEWEST).reverse());
  const blobsAfter = (
    await h.deps.db
      .selectFrom('blobs')
      .select('sha256')
      .where('account_id', '=', owner.account_id)
      .execute()
  ).length;
  assert.is(blobsBefore - blobsAfter, 4, 'bytes only the pruned releases used are deleted');
  const page = await h.server.request(`http://${first.app_id}.apps.localhost/`);
  assert.is(await page.text(), 'release 0', 'the live release still serves');
  assert.is((await pruneReleases(h.deps)).releases, 0, 'idempotent');
});

test('expired sessions, used or expired invites and verification links are pruned; live ones stay', async () => {
  const a = (
    await h.call('PUT', '/v0/apps', {
      key,
      body: site({ resources: { auth: { mode: 'app_users', public_signup: true } } }),
    })
  ).body;
  const host = `${a.app_id}.apps.localhost`;
  const s1 = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'old@example.com', password: 'a long password' },
  });
  const s2 = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'new@example.com', password: 'a long password' },
  });
  await sql`update app_sessions set expires_at = now() - interval '8 days' where user_id = ${s1.body.user.id}`.execute(
    h.deps.db,
  );
  const inv = await h.call('POST', `/v0/apps/${a.app_id}/admin-invites`, {
    key,
    body: { email: 'x@example.com' },
  });
  await sql`update app_invites set expires_at = now() - interval '31 days' where id = ${inv.body.invite_id}`.execute(
    h.deps.db,
  );
  const r = await pruneAuthMaterial(h.deps);
  assert.is(r.sessions, 1);
  assert.is(r.invites, 1);
  const cookie = s2.headers.get('set-cookie')!.split(';')[0]!;
  assert.is(
    (await h.call('GET', '/_platform/auth/session', { host, headers: { cookie } })).status,
    200,
    'a live session stays',
  );
  assert.equal(await pruneAuthMaterial(h.deps), { sessions: 0, invites: 0, verifications: 0 });
});

test('deleted data rows and file records are purged a week after deletion; live ones and recent deletions stay', async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { async fetch(req, ctx) {
      const notes = ctx.data.collection('notes');
      const docs = ctx.files.store('docs');
      const rows = [await notes.create({ body: 'old' }), await notes.create({ body: 'recent' }), await notes.create({ body: 'kept' })];
      const files = [await docs.createUpload('old', { filename: 'o.txt', content_type: 'text/plain' }), await docs.createUpload('kept', { filename: 'k.txt', content_type: 'text/plain' })];
      await notes.delete(rows[0].id); await notes.delete(rows[1].id); await docs.delete(files[0].file_id);
      return Response.json({ rows: rows.map((r) => r.id), files: files.map((f) => f.file_id) });
    } };`,
    {
      resources: {
        data: { collections: { notes: { fields: { body: 'string' } } } },
        files: { stores: { docs: { public: false } } },
      },
    },
  );
  const made = await h.call('POST', '/make', { host: app.host });
  assert.is(made.status, 200, made.text);
  const { rows, files } = made.body as { rows: string[]; files: string[] };
  await sql`update app_rows set deleted_at = now() - interval '8 days' where id = ${rows[0]}`.execute(
    h.deps.db,
  );
  await sql`update app_files set deleted_at = now() - interval '8 days' where id = ${files[0]}`.execute(
    h.deps.db,
  );
  const r = await pruneDeletedData(h.deps);
  assert.equal(r, { rows: 1, files: 1 });
  const left = await sql<{
    id: string;
    deleted: boolean;
  }>`select id, deleted_at is not null as deleted from app_rows where app_id = ${app.appId} order by id`.execute(
    h.deps.db,
  );
  assert.equal(
    left.rows.map((x) => x.id).sort(),
    [rows[1], rows[2]].sort(),
    'the old deletion is gone; the recent one and the live row stay',
  );
  const fileIds = await sql<{
    id: string;
  }>`select id from app_files where app_id = ${app.appId}`.execute(h.deps.db);
  assert.equal(
    fileIds.rows.map((x) => x.id),
    [files[1]],
  );
  assert.equal(await pruneDeletedData(h.deps), { rows: 0, files: 0 }, 'idempotent');
});

test.after(() => h.close());
test.run();
