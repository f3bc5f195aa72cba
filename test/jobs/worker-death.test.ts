/**
 * A job worker killed with SIGKILL in the middle of a job: the surviving worker notices that its
 * heartbeat stopped and releases its jobs (graphile-worker's force_unlock_workers), so the job
 * completes on the survivor with no operator command.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startWorker } from '../../worker/runner.ts';
import { eventsOf, waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);

const SERVER = `export default {
  async job(event, ctx) {
    // the first attempt takes far longer than the test waits: only a release lets a second one run
    if (event.attempt === 1) await new Promise((r) => setTimeout(r, 45000));
    ctx.log.info('slow job done', { attempt: event.attempt });
  },
};`;

const lockedBy = async (jobId: string) =>
  (
    await sql<{
      locked_by: string | null;
      attempts: number;
    }>`select locked_by, attempts from graphile_worker._private_jobs where payload->>'job_id' = ${jobId}`.execute(
      h.deps.db,
    )
  ).rows[0];
const heartbeats = async () =>
  await h.deps.db.selectFrom('worker_heartbeats').select(['worker_id', 'pid']).execute();

test('a worker killed mid-job: the other worker releases its jobs and the job completes there', async () => {
  const pub = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({
      runtime: { static_root: 'public', fallback: '404', server_entry: 'server.js' },
      files: [file('public/index.html', 'x'), file('server.js', SERVER, 'text/javascript')],
      resources: { jobs: { slow: { max_attempts: 3 } } },
    }),
  });
  assert.is(pub.body.status, 'published', pub.text);
  const appId = pub.body.app_id as string;
  const run = await h.api('POST /v0/apps/{app_id}/jobs/{job_name}/runs', {
    key: u.api_key,
    params: { app_id: appId, job_name: 'slow' },
  });

  // worker A: a real service process (`node src/start.mjs`) with only the worker role, on this database
  const child = spawn(process.execPath, [path.resolve('src/start.mjs')], {
    env: {
      ...process.env,
      DATABASE_URL: h.config.databaseUrl,
      PLATFORM_ROLE: 'worker',
      PLATFORM_SECRETS_KEY: h.config.secretsKey,
      PLATFORM_WORKER_STALE_SECONDS: '2',
      PLATFORM_DATA_DIR: path.resolve('.data', 'test-scratch', `worker-death-${process.pid}`),
      PLATFORM_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  let survivor: Awaited<ReturnType<typeof startWorker>> | undefined;
  try {
    const locked = await waitFor(async () => {
      const job = await lockedBy(run.job_id);
      return job?.locked_by &&
        (await heartbeats()).some((b) => b.worker_id === job.locked_by && b.pid === child.pid)
        ? job
        : undefined;
    }, 30_000).catch(async (err) => {
      throw new Error(
        `worker A never took the job: ${err}\n${stderr}\n${JSON.stringify(await lockedBy(run.job_id))} ${JSON.stringify(await heartbeats())} pid ${child.pid}`,
      );
    });
    assert.is(locked.attempts, 1);

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.is(
      (await lockedBy(run.job_id))?.locked_by,
      locked.locked_by,
      'the dead worker still holds the job',
    );

    // worker B, in this process, with the same short staleness
    const started = Date.now();
    survivor = await startWorker(
      { ...h.deps, config: { ...h.deps.config, workerStaleSeconds: 2 } },
      h.server.runtime,
    );
    const done = await waitFor(
      async () =>
        (await eventsOf(h, u.api_key, appId, 'job.succeeded')).find(
          (e) => e.metadata.job_id === run.job_id,
        ),
      60_000,
    );
    assert.is(done.metadata.attempt, 2, 'the released job ran again, its first attempt counted');
    assert.ok(Date.now() - started < 60_000);
    const log = (await eventsOf(h, u.api_key, appId, 'runtime.log.info')).find(
      (e) => e.metadata.attempt === 2,
    );
    assert.ok(log, 'the second attempt ran the handler to the end');
    assert.not.ok(
      (await heartbeats()).some((b) => b.pid === child.pid),
      "the dead worker's heartbeat rows are gone",
    );
    assert.ok((await heartbeats()).length > 0, 'the survivor beats');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await survivor?.stop();
  }
  assert.equal(
    await heartbeats(),
    [],
    'a clean stop removes its own rows (never mistaken for a death)',
  );
});

test.after(() => h.close());
test.run();
