import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { run } from 'graphile-worker';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { waitFor } from '../_lib/apps.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';

const exec = promisify(execFile);
const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;

const SLOW = `export default {
  async fetch(req, ctx) { return Response.json(await ctx.jobs.enqueue('slow', { ms: Number(new URL(req.url).searchParams.get('ms')) })) },
  async job(event) { await new Promise((r) => setTimeout(r, event.payload.ms)); },
};`;
async function slowApp() {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', SLOW, 'text/javascript')],
    resources: { jobs: { slow: {} } },
  });
  const r = await h.call('PUT', '/v0/apps', { key, body });
  return { appId: r.body.app_id as string, host: `${r.body.app_id}.apps.localhost` };
}
const lockedJob = async (jobId: string) =>
  (
    await sql<{
      locked_by: string | null;
      attempts: number;
    }>`select locked_by, attempts from graphile_worker._private_jobs where payload->>'job_id' = ${jobId}`.execute(
      h.deps.db,
    )
  ).rows[0];
const succeeded = async (appId: string) =>
  (await h.call('GET', `/v0/apps/${appId}/events?type=job.succeeded`, { key })).body.events.length;
const until = (fn: () => Promise<boolean>, ms = 15_000) => waitFor(fn, ms);

test('graceful stop drains a running job before it resolves', async () => {
  const a = await slowApp();
  const runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 50,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
  const { body } = await h.call('GET', '/go?ms=600', { host: a.host });
  await until(async () => Boolean((await lockedJob(body.job_id))?.locked_by));
  await runner.stop();
  assert.is(await succeeded(a.appId), 1, 'the job finished before stop() resolved');
  assert.is(await lockedJob(body.job_id), undefined, 'and is gone from the queue');
});

test('a worker process killed mid-job loses no job; unlock-stale-jobs lets another worker finish it', async () => {
  const a = await slowApp();
  const { body } = await h.call('GET', '/go?ms=4000', { host: a.host });
  const child = spawn(process.execPath, ['src/start.mjs'], {
    env: {
      ...process.env,
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      PLATFORM_ROLE: 'worker',
      PLATFORM_LOG_LEVEL: 'silent',
      PLATFORM_SECRETS_KEY: h.config.secretsKey,
      PORT: '8799',
    },
    stdio: 'ignore',
  });
  await until(async () => Boolean((await lockedJob(body.job_id))?.locked_by));
  child.kill('SIGKILL');
  await new Promise((r) => child.on('close', r));
  const stuck = await lockedJob(body.job_id);
  assert.ok(stuck?.locked_by, 'the job is still there, locked by the dead worker');
  assert.is(await succeeded(a.appId), 0);
  const out = await exec(
    process.execPath,
    [...ADMIN_ARGS, 'unlock-stale-jobs', '--older-than-seconds', '0'],
    {
      env: {
        ...process.env,
        DATABASE_URL: process.env.TEST_DATABASE_URL,
        PLATFORM_LOG_LEVEL: 'silent',
      },
    },
  );
  const result = JSON.parse(out.stdout.trim().split('\n').pop()!);
  assert.ok(result.jobs >= 1);
  const runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 50,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
  await until(async () => (await succeeded(a.appId)) === 1);
  await runner.stop();
  assert.is(await lockedJob(body.job_id), undefined);
});

test.after(() => h.close());
test.run();
