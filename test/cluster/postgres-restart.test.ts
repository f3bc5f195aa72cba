/**
 * Postgres restarted in the middle of a small load, on a service of the test's own (its own
 * embedded cluster: the shared test cluster is never stopped): static hits keep answering from
 * memory, /healthz says `db: unavailable` and recovers by itself, and every publish and every job
 * run the API acknowledged (200/202) is there afterwards; the jobs run once the database is back.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { prepareDatabase, boot } from '../../src/boot.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { freePort } from '../../src/lib/ports.ts';
import { createLogger } from '../../src/logger.ts';
import { startService } from '../../src/service.ts';
import { createUser } from '../../src/users/service.ts';
import { file, site } from '../_lib/bundles.ts';
import { request } from '../_lib/http.ts';

const dataDir = path.resolve('.data', 'test-scratch', `pg-restart-${process.pid}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a Postgres restart under load loses no acknowledged publish or job, and the service recovers by itself', async () => {
  await rm(dataDir, { recursive: true, force: true });
  const pgPort = await freePort();
  let pg: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir, port: pgPort });
  const url = pg.url('postgres');
  await prepareDatabase(url);
  const config = loadConfig({
    DATABASE_URL: url,
    PORT: String(await freePort()),
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
    PLATFORM_LOG_LEVEL: 'silent',
    PLATFORM_PLANS_FILE: path.resolve('test/fixtures/plans-roomy.json'),
  });
  const log = createLogger((process.env.TEST_LOG_LEVEL as 'warn' | undefined) ?? 'silent');
  const service = await startService(config, log, await boot(config, { log }));
  const port = service.port!;
  try {
    const { api_key: key } = await createUser(service.booted.deps.db, {
      email: `restart-${process.pid}@example.com`,
    });
    const body = (n: number) =>
      site({
        runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
        files: [
          file('public/index.html', `<h1>v${n}</h1>`),
          file('server.js', 'export default { job() {} };', 'text/javascript'),
        ],
        resources: { jobs: { noop: {} } },
      });
    const first = await request(port, 'PUT', '/v0/apps', { key, body: body(0) });
    assert.is(first.status, 200, JSON.stringify(first.body));
    const appId = first.body.app_id as string;
    // a second app nobody republishes during the test: what a node has cached for it keeps serving
    // (the app being republished cannot: each publish makes its node look its live release up again)
    const quiet = await request(port, 'PUT', '/v0/apps', {
      key,
      body: site({ files: [file('public/index.html', '<h1>quiet</h1>')] }),
    });
    const quietHost = `${quiet.body.app_id}.apps.localhost`;
    assert.is(
      (await request(port, 'GET', '/', { host: quietHost })).text,
      '<h1>quiet</h1>',
      'the static page is cached before the outage',
    );

    const releases: string[] = [];
    const jobs: string[] = [];
    const health = new Set<string>();
    let staticDuringOutage = 0;
    const staticStatuses: number[] = [];
    let outage = false;
    let loading = true;
    const loops = [
      (async () => {
        for (let i = 1; loading; i++) {
          const r = await request(port, 'PUT', `/v0/apps/${appId}`, { key, body: body(i) });
          if (r.status === 200) releases.push(r.body.release_id);
          await sleep(30);
        }
      })(),
      (async () => {
        while (loading) {
          const r = await request(port, 'POST', `/v0/apps/${appId}/jobs/noop/runs`, {
            key,
            body: {},
          });
          if (r.status === 202) jobs.push(r.body.job_id);
          await sleep(30);
        }
      })(),
      (async () => {
        while (loading) {
          const r = await request(port, 'GET', '/', { host: quietHost });
          if (outage) staticStatuses.push(r.status);
          if (outage && r.status === 200) staticDuringOutage++;
          health.add(String((await request(port, 'GET', '/healthz')).body?.db));
          await sleep(20);
        }
      })(),
    ];

    await sleep(1500);
    const beforeOutage = { releases: releases.length, jobs: jobs.length };
    outage = true;
    await pg.stop();
    await sleep(2000);
    pg = await startEmbeddedPostgres({ dataDir, port: pgPort });
    const back = Date.now();
    while ((await request(port, 'GET', '/healthz')).body?.db !== 'ok') {
      assert.ok(Date.now() - back < 30_000, '/healthz recovers by itself');
      await sleep(100);
    }
    outage = false;
    const atRecovery = { releases: releases.length, jobs: jobs.length };
    await sleep(2000);
    loading = false;
    await Promise.all(loops);

    assert.ok(beforeOutage.releases > 0 && beforeOutage.jobs > 0, 'load ran before the outage');
    assert.ok(
      releases.length > atRecovery.releases && jobs.length > atRecovery.jobs,
      'publishes and jobs are accepted again after it',
    );
    assert.ok(
      staticDuringOutage > 0,
      `static hits answered while Postgres was down (statuses seen: ${staticStatuses.join(' ')})`,
    );
    assert.ok(
      health.has('unavailable') && health.has('ok'),
      `/healthz said: ${[...health].join(', ')}`,
    );

    const db = service.booted.deps.db;
    const stored = new Set(
      (await db.selectFrom('releases').select('id').where('app_id', '=', appId).execute()).map(
        (r) => r.id,
      ),
    );
    assert.equal(
      releases.filter((id) => !stored.has(id)),
      [],
      'every acknowledged publish is stored',
    );
    // every acknowledged job run happens (the worker recovers too)
    const deadline = Date.now() + 60_000;
    let missing: string[] = jobs;
    while (missing.length && Date.now() < deadline) {
      const done = await db
        .selectFrom('app_events')
        .select('metadata')
        .where('app_id', '=', appId)
        .where('type', '=', 'job.succeeded')
        .execute();
      const ids = new Set(done.map((e) => (e.metadata as { job_id?: string }).job_id));
      missing = jobs.filter((id) => !ids.has(id));
      if (missing.length) await sleep(250);
    }
    if (missing.length) {
      const state = await sql<{
        job_id: string;
        locked_by: string | null;
        attempts: number;
        last_error: string | null;
        run_at: Date;
      }>`
        select payload->>'job_id' as job_id, locked_by, attempts, last_error, run_at from graphile_worker._private_jobs where payload->>'job_id' = any(${missing}::text[]) limit 5`.execute(
        db,
      );
      const events = await db
        .selectFrom('app_events')
        .select(['type', 'metadata'])
        .where('app_id', '=', appId)
        .where('type', 'like', 'job.%')
        .where('type', '!=', 'job.enqueued')
        .where('type', '!=', 'job.succeeded')
        .limit(5)
        .execute();
      assert.equal(
        missing,
        [],
        `all ${jobs.length} acknowledged job runs ran; ${missing.length} did not: ${JSON.stringify(state.rows)} ${JSON.stringify(events)}`,
      );
    }
  } finally {
    await service.stop();
    await pg.stop().catch(() => {});
  }
});

test.run();
