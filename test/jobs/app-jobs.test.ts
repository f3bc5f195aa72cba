import { run, type Runner } from 'graphile-worker';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { addAppJob } from '../../src/jobs/enqueue.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { pruneFailedJobs } from '../../worker/tasks/retention.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { eventsOf as eventsOfApp, waitFor } from '../_lib/apps.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const u = await newUser(h);
const key = u.api_key;
let runner: Runner;

const SERVER = `export default {
  async fetch(req, ctx) {
    const url = new URL(req.url);
    const name = url.searchParams.get('job');
    try {
      const r = await ctx.jobs.enqueue(name, { n: Number(url.searchParams.get('n') ?? 1) }, { delay_seconds: Number(url.searchParams.get('delay') ?? 0) });
      return Response.json(r);
    } catch (e) {
      return Response.json({ error: e.message, code: e.code, name: e.name }, { status: 400 });
    }
  },
  async job(event, ctx) {
    ctx.log.info('job ran', { job_name: event.job_name, payload: event.payload, attempt: event.attempt, max: event.max_attempts, has_scheduled_for: typeof event.scheduled_for === 'string', job_id: event.job_id, secret: ctx.secrets.get('S') });
    if (event.job_name === 'flaky') throw new Error('flaky failure ' + event.attempt);
    if (event.job_name === 'chain' && event.payload.n < 3) await ctx.jobs.enqueue('chain', { n: event.payload.n + 1 });
  },
};`;

async function publishJobsApp(
  source = SERVER,
  jobs: Record<string, unknown> = { hello: {}, flaky: { max_attempts: 2 }, chain: {} },
) {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
    resources: { jobs },
  });
  const r = await h.call('PUT', '/v0/apps', { key, body });
  assert.is(r.body.status, 'published', r.text);
  return { appId: r.body.app_id as string, host: `${r.body.app_id}.apps.localhost` };
}

const eventsOf = (appId: string, type: string) => eventsOfApp(h, key, appId, type);

test.before(async () => {
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    concurrency: 4,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
});

test('ctx.jobs.enqueue returns a job id, records job.enqueued, and the job handler runs with its event and ctx', async () => {
  const a = await publishJobsApp();
  await h.call('PUT', `/v0/apps/${a.appId}/secrets/S`, { key, body: { value: 'sekret-value' } });
  const r = await h.call('GET', '/go?job=hello&n=7', { host: a.host });
  assert.is(r.status, 200, r.text);
  assert.match(r.body.job_id, /^job_/);
  const enq = await eventsOf(a.appId, 'job.enqueued');
  assert.is(enq[0]!.metadata.job_id, r.body.job_id);
  const ok = await waitFor(async () => (await eventsOf(a.appId, 'job.succeeded'))[0]);
  assert.is(ok.metadata.job_id, r.body.job_id);
  assert.is(ok.metadata.attempt, 1);
  const log = (await eventsOf(a.appId, 'runtime.log.info'))[0]!;
  assert.equal(log.metadata, {
    job_name: 'hello',
    payload: { n: 7 },
    attempt: 1,
    max: 3,
    has_scheduled_for: true,
    job_id: r.body.job_id,
    secret: '[redacted]',
  });
});

test('an undeclared job is a catchable error with a stable code and records job.enqueue_failed', async () => {
  const a = await publishJobsApp();
  const r = await h.call('GET', '/go?job=nope', { host: a.host });
  assert.is(r.status, 400);
  assert.equal(r.body, {
    error: 'Job "nope" is not declared in this release\'s resources.jobs.',
    code: 'job_not_declared',
    name: 'PlatformError',
  });
  const failed = await eventsOf(a.appId, 'job.enqueue_failed');
  assert.is(failed[0]!.metadata.code, 'job_not_declared');
  const bad = await h.call('GET', '/go?job=hello&delay=-1', { host: a.host });
  assert.is(bad.body.code, 'invalid_delay');
});

test('a throwing job is retried with job.retry and ends with job.failed at max_attempts', async () => {
  const a = await publishJobsApp();
  await h.call('GET', '/go?job=flaky', { host: a.host });
  const retry = await waitFor(async () => (await eventsOf(a.appId, 'job.retry'))[0]);
  assert.is(retry.metadata.attempt, 1);
  assert.is(retry.metadata.max_attempts, 2);
  // next_run_at is when graphile-worker runs it again: the row it rescheduled says the same time
  const rescheduled = await waitFor(
    async () =>
      (
        await sql<{
          run_at: Date;
        }>`select j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'app_job' and j.payload->>'job_id' = ${retry.metadata.job_id} and j.attempts = 1 and j.locked_at is null`.execute(
          h.deps.db,
        )
      ).rows[0],
  );
  const drift = Math.abs(rescheduled.run_at.getTime() - Date.parse(retry.metadata.next_run_at));
  assert.ok(
    drift < 1000,
    `next_run_at ${retry.metadata.next_run_at}, graphile-worker's run_at ${rescheduled.run_at.toISOString()}`,
  );
  assert.match(retry.metadata.error, 'flaky failure 1');
  // Tests drive time: run the retry now instead of waiting out the backoff.
  await sql`select graphile_worker.reschedule_jobs(array(select id from graphile_worker.jobs where task_identifier = 'app_job' and attempts > 0), run_at => now())`.execute(
    h.deps.db,
  );
  const failed = await waitFor(async () => (await eventsOf(a.appId, 'job.failed'))[0]);
  assert.is(failed.metadata.attempt, 2);
  assert.match(failed.metadata.error, 'flaky failure 2');
  // graphile-worker keeps a job that failed for good; retention deletes it after a day, not before
  const row = () =>
    sql<{
      attempts: number;
    }>`select attempts from graphile_worker._private_jobs where payload->>'job_id' = ${failed.metadata.job_id} and locked_at is null`
      .execute(h.deps.db)
      .then((r) => r.rows);
  assert.equal(await waitFor(async () => ((await row()).length ? await row() : undefined)), [
    { attempts: 2 },
  ]);
  await pruneFailedJobs(h.deps);
  assert.is((await row()).length, 1, 'kept for a day');
  assert.ok((await pruneFailedJobs(h.deps, new Date(Date.now() + 25 * 3600_000))) >= 1);
  assert.is((await row()).length, 0, 'gone after it');
});

test('jobs enqueue jobs; an unpublished app or a missing job handler is job.blocked', async () => {
  const a = await publishJobsApp();
  await h.call('GET', '/go?job=chain&n=1', { host: a.host });
  await waitFor(async () =>
    (await eventsOf(a.appId, 'job.succeeded')).length >= 3 ? true : undefined,
  );
  const noHandler = await publishJobsApp(
    `export default { async fetch(req, ctx) { return Response.json(await ctx.jobs.enqueue('hello', {})) } };`,
  );
  await h.call('GET', '/go', { host: noHandler.host });
  const blocked = await waitFor(async () => (await eventsOf(noHandler.appId, 'job.blocked'))[0]);
  assert.match(blocked.metadata.reason, 'no job() handler');
  const gone = await publishJobsApp();
  await h.call('GET', '/go?job=hello&delay=1', { host: gone.host });
  await h.call('DELETE', `/v0/apps/${gone.appId}`, { key });
  const b2 = await waitFor(async () => (await eventsOf(gone.appId, 'job.blocked'))[0]);
  assert.match(b2.metadata.reason, 'not published');
});

test('a job added in a transaction that rolls back leaves no job behind', async () => {
  const a = await publishJobsApp();
  const count = async () =>
    Number(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from graphile_worker._private_jobs where payload->>'app_id' = ${a.appId}`.execute(
          h.deps.db,
        )
      ).rows[0]!.n,
    );
  const before = await count();
  const ROLL_BACK = new Error('roll back');
  let seenInside = -1;
  const outcome = await h.deps.db
    .transaction()
    .execute(async (trx) => {
      await addAppJob(trx, {
        app_id: a.appId,
        job_name: 'hello',
        payload: {},
        source: 'enqueue',
        maxAttempts: 3,
        delaySeconds: 3600,
      });
      seenInside = Number(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from graphile_worker._private_jobs where payload->>'app_id' = ${a.appId}`.execute(
            trx,
          )
        ).rows[0]!.n,
      );
      throw ROLL_BACK;
    })
    .catch((err: unknown) => err);
  assert.is(outcome, ROLL_BACK, 'the transaction ended by our rollback, not by addAppJob failing');
  assert.is(seenInside, before + 1, 'inside the transaction, the job was there');
  assert.is(await count(), before, 'after the rollback, it is gone');
});

test('POST /jobs/<name>/runs runs a declared job of the live release now, with its payload and the usual events', async () => {
  const a = await publishJobsApp();
  const run = await h.api('POST /v0/apps/{app_id}/jobs/{job_name}/runs', {
    key,
    params: { app_id: a.appId, job_name: 'hello' },
    body: { payload: { n: 42 } },
  });
  assert.is(run.status, 'queued');
  assert.is(run.job_name, 'hello');
  assert.match(run.job_id, /^job_/);
  assert.match(String(run.worker_job_id), /^\d+$/, 'the graphile-worker job id');
  const queued = await sql<{
    id: string;
    payload: { job_id: string; source: string };
  }>`select id::text, payload from graphile_worker._private_jobs where id = ${run.worker_job_id}::bigint`.execute(
    h.deps.db,
  );
  // the worker may already have run it (a finished job's row is gone): while queued, its row is this job
  if (queued.rows[0])
    assert.is(queued.rows[0].payload.job_id, run.job_id, 'the worker job id names the queued job');
  const enq = (await eventsOf(a.appId, 'job.enqueued')).find(
    (e) => e.metadata.job_id === run.job_id,
  );
  assert.is(enq?.metadata.source, 'api');
  const ok = await waitFor(async () =>
    (await eventsOf(a.appId, 'job.succeeded')).find((e) => e.metadata.job_id === run.job_id),
  );
  assert.is(ok.metadata.source, 'api');
  const log = (await eventsOf(a.appId, 'runtime.log.info')).find(
    (e) => e.metadata.job_id === run.job_id,
  );
  assert.equal(log?.metadata.payload, { n: 42 });

  // no body at all: payload null
  const bare = await h.call('POST', `/v0/apps/${a.appId}/jobs/hello/runs`, { key });
  assert.is(bare.status, 202, bare.text);
  const undeclared = await h.call('POST', `/v0/apps/${a.appId}/jobs/nope/runs`, { key, body: {} });
  assert.is(undeclared.status, 404);
  assert.is(undeclared.body.error.code, 'not_found');
  const badName = await h.call('POST', `/v0/apps/${a.appId}/jobs/Not%20A%20Name/runs`, {
    key,
    body: {},
  });
  assert.is(badName.status, 400);
  const extra = await h.call('POST', `/v0/apps/${a.appId}/jobs/hello/runs`, {
    key,
    body: { payload: 1, delay: 3 },
  });
  assert.is(extra.status, 400);
  assert.is(extra.body.error.code, 'invalid_request');
  const big = await h.call('POST', `/v0/apps/${a.appId}/jobs/hello/runs`, {
    key,
    body: { payload: 'x'.repeat(70 * 1024) },
  });
  assert.is(big.status, 413);

  const viewer = await newMember(h, u.account_id, 'viewer');
  const denied = await h.call('POST', `/v0/apps/${a.appId}/jobs/hello/runs`, {
    key: viewer.api_key,
    body: {},
  });
  assert.is(denied.status, 403);
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${a.appId}/jobs/hello/runs`, body: {} },
    { ownerAccountId: u.account_id, deniedRoles: ['viewer'] },
  );

  await h.call('DELETE', `/v0/apps/${a.appId}`, { key });
  const gone = await h.call('POST', `/v0/apps/${a.appId}/jobs/hello/runs`, { key, body: {} });
  assert.is(gone.status, 409);
  assert.is(gone.body.error.code, 'conflict');
});

test("jobs take turns between apps: one app's backlog does not hold up another app's job", async () => {
  const BURST = `export default {
    async fetch(req, ctx) {
      const n = Number(new URL(req.url).searchParams.get('n'));
      for (let i = 0; i < n; i++) await ctx.jobs.enqueue('work', { i });
      return new Response('queued ' + n);
    },
    async job() { await new Promise((r) => setTimeout(r, 200)); },
  };`;
  const a = await publishJobsApp(BURST, { work: {} });
  const b = await publishJobsApp(BURST, { work: {} });
  assert.is((await h.call('GET', '/q?n=60', { host: a.host })).text, 'queued 60');
  assert.is((await h.call('GET', '/q?n=1', { host: b.host })).text, 'queued 1');
  const bDone = await waitFor(async () => (await eventsOf(b.appId, 'job.succeeded'))[0], 30_000);
  const aDone = await waitFor(async () => {
    const done = await eventsOf(a.appId, 'job.succeeded');
    return done.length === 60 && done;
  }, 30_000);
  // first in, first out, app B's one job would finish after (nearly) all of app A's sixty
  const later = aDone.filter((e) => e.created_at > bDone.created_at).length;
  assert.ok(later >= 30, `${later} of app A's 60 jobs finished after app B's one`);
});

test("a job's log lines share its app's allowance: past it they are counted in one warning, and every outcome is written", async () => {
  const a = await publishJobsApp(
    `export default {
      async fetch(req, ctx) { for (let i = 0; i < 25; i++) await ctx.jobs.enqueue('loud', { i }); return new Response('queued'); },
      async job(event, ctx) { for (let i = 0; i < 200; i++) ctx.log.info('job line ' + i); },
    };`,
    { loud: {} },
  );
  assert.is((await h.call('GET', '/go', { host: a.host })).text, 'queued');
  await waitFor(async () =>
    (await eventsOf(a.appId, 'job.succeeded')).length === 25 ? true : undefined,
  );
  // what a stop does: the writer reports every drop not yet reported (this is the file's last test)
  await h.server.runtime.events.close();
  const warnings = await eventsOf(a.appId, 'runtime.log.warn');
  const dropped = warnings.reduce((n, w) => n + (w.metadata.dropped as number), 0);
  const count = async (type: string) =>
    Number(
      (
        await h.deps.db
          .selectFrom('app_events')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('app_id', '=', a.appId)
          .where('type', '=', type)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const kept = await count('runtime.log.info');
  assert.ok(kept >= 2000 && kept < 5000, `kept ${kept}`);
  assert.ok(warnings.length >= 1 && dropped > 0, JSON.stringify(warnings));
  assert.is(kept + dropped, 5000, 'every line is stored or counted');
  assert.is(await count('job.succeeded'), 25);
});

test.after(async () => {
  await runner.stop();
  await h.close();
});
test.run();
