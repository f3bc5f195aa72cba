/**
 * Waiting jobs per app: `ctx.jobs.enqueue` is refused with `quota_exceeded` once an app has its
 * plan's `jobs.waiting.max` jobs waiting (a plans file sets Free's to 5); jobs that finish give
 * their place back; another app is not touched; the hourly recount corrects a count that drifted.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run, type Runner } from 'graphile-worker';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { recountWaiting } from '../../src/jobs/backlog.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { eventsOf, publishServerApp, waitFor } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const plansFile = path.join(tmpdir(), `plans-backlog-${process.pid}.json`);
writeFileSync(
  plansFile,
  JSON.stringify({
    free: { limits: { 'apps.max': 10000, 'requests.monthly.max': 1e12, 'jobs.waiting.max': 5 } },
  }),
);
const h = await createHarness({ PLATFORM_PLANS_FILE: plansFile });
const u = await newUser(h);
let runner: Runner | undefined;

const SERVER = `export default {
  async fetch(req, ctx) {
    const url = new URL(req.url);
    const out = [];
    for (let i = 0; i < Number(url.searchParams.get('n')); i++) {
      out.push(await ctx.jobs.enqueue('work', { i }, { delay_seconds: Number(url.searchParams.get('delay') ?? 0) }).then(() => 'ok', (e) => e.code + ': ' + e.message));
    }
    return Response.json(out);
  },
  async job() {},
};`;
const publish = () => publishServerApp(h, u.api_key, SERVER, { resources: { jobs: { work: {} } } });
const fill = async (host: string, n: number, delay = 3600) =>
  (await h.call('GET', `/fill?n=${n}&delay=${delay}`, { host })).body as string[];
const waiting = async (appId: string) =>
  (
    await sql<{
      waiting: number;
    }>`select waiting from app_job_backlog where app_id = ${appId}`.execute(h.deps.db)
  ).rows[0]?.waiting;

test("past the plan's waiting jobs an enqueue is refused with quota_exceeded and job.enqueue_failed; another app is not touched", async () => {
  const a = await publish();
  const out = await fill(a.host, 7);
  assert.equal(out.slice(0, 5), Array(5).fill('ok'));
  assert.equal(
    out.slice(5),
    Array(2).fill(
      "quota_exceeded: This app has 5 jobs waiting to run; Free allows 5 per app. Let some finish first, or put more work in each job's payload.",
    ),
  );
  assert.is(await waiting(a.appId), 5, 'the refused ones did not count');
  const failed = await eventsOf(h, u.api_key, a.appId, 'job.enqueue_failed');
  assert.equal(
    failed.map((e) => e.metadata.code),
    ['quota_exceeded', 'quota_exceeded'],
  );
  const b = await publish();
  assert.equal(await fill(b.host, 5), Array(5).fill('ok'));
});

test('jobs that finish give their places back; the recount corrects a count that drifted', async () => {
  const a = await publish();
  assert.equal(await fill(a.host, 5), Array(5).fill('ok'));
  assert.match((await fill(a.host, 1))[0]!, /^quota_exceeded/);
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    concurrency: 2,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
  // run the waiting jobs now instead of in an hour
  await sql`select graphile_worker.reschedule_jobs(array(select id from graphile_worker.jobs where task_identifier = 'app_job'), run_at => now())`.execute(
    h.deps.db,
  );
  await waitFor(async () =>
    (await eventsOf(h, u.api_key, a.appId, 'job.succeeded')).length === 5 ? true : undefined,
  );
  // a job's place is given back as it finishes, just after its success event is written
  await waitFor(async () => ((await waiting(a.appId)) === 0 ? true : undefined));
  assert.equal(await fill(a.host, 2), ['ok', 'ok']);
  // a count that drifted (as when a worker is killed mid-job) is put right by the hourly recount
  await runner.stop();
  runner = undefined;
  await sql`update app_job_backlog set waiting = 5 where app_id = ${a.appId}`.execute(h.deps.db);
  assert.match((await fill(a.host, 1))[0]!, /^quota_exceeded/);
  assert.ok((await recountWaiting(h.deps.db)) >= 1);
  assert.is(await waiting(a.appId), 2, 'the two jobs still waiting');
  assert.equal(await fill(a.host, 3), ['ok', 'ok', 'ok']);
});

test.after(async () => {
  await runner?.stop();
  await h.close();
});
test.run();
