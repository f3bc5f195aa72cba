/**
 * `npm run cluster`, driven as an operator would: one Postgres, the S3 server, two API nodes and
 * two workers, all real processes. Publish on node 1, serve on node 2 (bytes from the bucket); jobs
 * and a schedule's period run exactly once across both workers; a worker killed with SIGKILL mid-job has its job finished
 * by the other; an API node killed leaves the other serving; Ctrl-C leaves nothing behind.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDb, createPool } from '../../src/db/database.ts';
import { periodStart } from '../../src/jobs/schedules.ts';
import { freePort } from '../../src/lib/ports.ts';
import { createUser } from '../../src/users/service.ts';
import { file, site } from '../_lib/bundles.ts';
import { alive, request } from '../_lib/http.ts';
import { killProcessesOf, npmScriptArgs, processesOf } from '../_lib/processes.ts';

const dataDir = path.resolve('.data', 'test-scratch', `cluster-${process.pid}`);

/** Processes whose command line names `dir` (Postgres started on the data directory). */
function startedIn(dir: string): number[] {
  const lines = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n');
  return lines.filter((l) => l.includes(dir)).map((l) => Number(l.trim().split(/\s+/)[0]));
}

async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const SERVER = `export default {
  async fetch() { return new Response('served by the cluster'); },
  async job(event, ctx) {
    if (event.job_name === 'slow' && event.attempt === 1) await new Promise((r) => setTimeout(r, 45000));
    await ctx.data.collection('runs').create({ job_id: event.job_id, job_name: event.job_name, attempt: event.attempt });
  },
};`;

test('the cluster: publish on one node, serve on the other, jobs once, a killed worker and a killed node are survived', async () => {
  await rm(dataDir, { recursive: true, force: true });
  const basePort = await freePort();
  const cluster = spawn(
    process.execPath,
    [...npmScriptArgs('cluster'), '--data-dir', dataDir, '--base-port', String(basePort)],
    {
      env: { ...process.env, PLATFORM_WORKER_STALE_SECONDS: '4', PLATFORM_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  cluster.stdout!.on('data', (d) => (out += d));
  cluster.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) =>
    cluster.on('exit', (code) => resolve(code)),
  );
  let db: ReturnType<typeof createDb> | undefined;
  const pids: number[] = [];
  const leftover: number[] = [];
  try {
    await until(
      async () => out.includes('Ctrl-C stops everything.'),
      120_000,
      `the cluster to start:\n${out}`,
    );
    const [node1, node2] = [
      ...out.matchAll(/api-(\d)\s+http:\/\/127\.0\.0\.1:(\d+) {2}\(pid (\d+)\)/g),
    ].map((m) => ({ port: Number(m[2]), pid: Number(m[3]) }));
    const workerPids = [...out.matchAll(/worker-\d {2}pid (\d+)/g)].map((m) => Number(m[1]));
    assert.ok(node1 && node2 && workerPids.length === 2, out);
    pids.push(node1.pid, node2.pid, ...workerPids);
    const creds = JSON.parse(await readFile(path.join(dataDir, 'postgres.json'), 'utf8')) as {
      port: number;
      user: string;
      password: string;
    };
    const pool = createPool(
      `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${creds.port}/postgres`,
      2,
    );
    db = createDb(pool);
    const { api_key: key } = await createUser(db, { email: 'operator@example.com' });

    // publish on node 1; node 2 serves it, its bytes in the bucket
    const pub = await request(node1.port, 'PUT', '/v0/apps', {
      key,
      body: site({
        runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
        files: [
          file('public/index.html', '<h1>cluster</h1>'),
          file('server.js', SERVER, 'text/javascript'),
        ],
        resources: {
          jobs: {
            count: { max_attempts: 1 },
            slow: { max_attempts: 3 },
            tick: { trigger: 'schedule', schedule: 'every_15_minutes' },
          },
          data: {
            collections: {
              runs: { fields: { job_id: 'string', job_name: 'string', attempt: 'integer' } },
            },
          },
        },
      }),
    });
    assert.is(pub.status, 200, pub.text);
    assert.is(pub.body.status, 'published', pub.text);
    const host = `${pub.body.app_id}.apps.localhost`;
    assert.is((await request(node2.port, 'GET', '/', { host })).text, '<h1>cluster</h1>');
    assert.is(
      (await request(node2.port, 'GET', '/dynamic', { host })).text,
      'served by the cluster',
    );
    const stored = await db.selectFrom('blobs').select('stored_in').distinct().execute();
    assert.equal(
      stored.map((r) => r.stored_in),
      ['s3'],
      'release files are in the bucket',
    );

    // 20 job runs through both nodes: each runs exactly once, spread over the workers
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await request(
        i % 2 ? node2.port : node1.port,
        'POST',
        `/v0/apps/${pub.body.app_id}/jobs/count/runs`,
        { key, body: { payload: { i } } },
      );
      assert.is(r.status, 202, r.text);
      ids.push(r.body.job_id);
    }
    const runs = await until(
      async () => {
        const rows = await sql<{
          job_id: string;
        }>`select data->>'job_id' as job_id from app_rows where app_id = ${pub.body.app_id} and collection = 'runs' and data->>'job_name' = 'count'`.execute(
          db!,
        );
        return rows.rows.length >= 20 ? rows.rows : undefined;
      },
      60_000,
      '20 job runs',
    );
    await new Promise((r) => setTimeout(r, 1000)); // a duplicate would show up by now
    const again = await sql<{
      n: number;
    }>`select count(*)::int as n from app_rows where app_id = ${pub.body.app_id} and collection = 'runs' and data->>'job_name' = 'count'`.execute(
      db,
    );
    assert.is(again.rows[0]!.n, 20, 'no job ran twice');
    assert.equal(runs.map((r) => r.job_id).sort(), [...ids].sort());

    // a schedule's period runs once, however many workers tick at once (here: both, for the same minute).
    // The real every-minute cron ticks too, and may cross into the next 15-minute period meanwhile: that
    // period's run is legitimate, so runs are counted per period.
    const { ts } = (await sql<{ ts: Date }>`select date_trunc('minute', now()) as ts`.execute(db))
      .rows[0]!;
    for (let i = 0; i < 2; i++)
      await sql`select graphile_worker.add_job('app_schedules_tick', json_build_object('_cron', json_build_object('ts', ${ts.toISOString()}::text)))`.execute(
        db,
      );
    const tickRuns = async () =>
      (
        await sql<{
          job_id: string;
          period: string | null;
        }>`select r.data->>'job_id' as job_id, s.period_start::text as period from app_rows r
          left join app_schedule_runs s on s.app_id = r.app_id and s.job_name = 'tick' and s.job_id = r.data->>'job_id'
          where r.app_id = ${pub.body.app_id} and r.collection = 'runs' and r.data->>'job_name' = 'tick'`.execute(
          db!,
        )
      ).rows;
    const period = (
      await sql<{
        p: string;
      }>`select ${periodStart('every_15_minutes', ts)}::timestamptz::text as p`.execute(db)
    ).rows[0]!.p;
    await until(
      async () => (await tickRuns()).some((r) => r.period === period),
      30_000,
      'the scheduled job to run',
    );
    await new Promise((r) => setTimeout(r, 1500));
    const seen = await tickRuns();
    assert.is(
      seen.filter((r) => r.period === period).length,
      1,
      `the scheduled job ran once for its period: ${JSON.stringify(seen)}`,
    );
    assert.ok(
      seen.every((r) => r.period !== null),
      `every run is its period's claimed job: ${JSON.stringify(seen)}`,
    );
    assert.is(
      new Set(seen.map((r) => r.period)).size,
      seen.length,
      `no period ran twice: ${JSON.stringify(seen)}`,
    );

    // a worker killed with SIGKILL mid-job: the other finishes the job, no operator command
    const slow = await request(node1.port, 'POST', `/v0/apps/${pub.body.app_id}/jobs/slow/runs`, {
      key,
      body: {},
    });
    const holder = await until(
      async () => {
        const r = await sql<{
          pid: number;
        }>`select h.pid from graphile_worker._private_jobs j join worker_heartbeats h on h.worker_id = j.locked_by where j.payload->>'job_id' = ${slow.body.job_id}`.execute(
          db!,
        );
        return r.rows[0]?.pid;
      },
      30_000,
      'a worker to take the slow job',
    );
    assert.ok(workerPids.includes(holder));
    process.kill(holder, 'SIGKILL');
    const finished = await until(
      async () =>
        (
          await sql<{
            attempt: number;
          }>`select (data->>'attempt')::int as attempt from app_rows where app_id = ${pub.body.app_id} and data->>'job_id' = ${slow.body.job_id}`.execute(
            db!,
          )
        ).rows[0],
      60_000,
      'the slow job to finish on the other worker',
    );
    assert.is(finished.attempt, 2);

    // an API node killed: the other keeps serving and publishing
    process.kill(node1.pid, 'SIGKILL');
    assert.is((await request(node2.port, 'GET', '/', { host })).text, '<h1>cluster</h1>');
    const republish = await request(node2.port, 'PUT', `/v0/apps/${pub.body.app_id}`, {
      key,
      body: site({ files: [file('public/index.html', '<h1>after</h1>')] }),
    });
    assert.is(republish.status, 200, republish.text);
    assert.is((await request(node2.port, 'GET', '/', { host })).text, '<h1>after</h1>');
  } finally {
    await db?.destroy();
    cluster.kill('SIGINT');
    const code = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r('hung'), 30_000).unref()),
    ]);
    // whatever the outcome, nothing this test started may outlive it (and compete with later suites)
    leftover.push(...pids.filter(alive));
    leftover.push(...startedIn(dataDir));
    for (const pid of [...leftover, ...(code === 'hung' ? [cluster.pid!] : [])]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    assert.is(code, 0, `the cluster stops on Ctrl-C:\n${out.slice(-2000)}`);
  }
  assert.equal(leftover, [], 'no node, worker or Postgres process is left');
  const postmaster = await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(
    () => '',
  );
  assert.ok(!postmaster || !alive(Number(postmaster.split('\n')[0])), 'Postgres stopped');
});

test('a cluster that cannot come up (its port held by something that never answers) says why, exits 1 and leaves nothing running', async () => {
  const heldDir = `${dataDir}-held`;
  await rm(heldDir, { recursive: true, force: true });
  const holder = net.createServer(() => {}); // takes connections, answers nothing
  // below Linux's ephemeral range (32768-60999): the cluster gives api-2 the next port, which an outgoing
  // connection could otherwise take first (api-2 would then fail, not api-1, and be the one reported)
  for (let tries = 0; ; tries++) {
    const listening = await new Promise<boolean>((r) => {
      holder.once('error', () => r(false));
      holder.listen(20_000 + Math.floor(Math.random() * 10_000), '127.0.0.1', () => r(true));
    });
    if (listening) break;
    if (tries > 50) throw new Error('no free port below the ephemeral range');
  }
  const port = (holder.address() as net.AddressInfo).port;
  const cluster = spawn(
    process.execPath,
    [...npmScriptArgs('cluster'), '--data-dir', heldDir, '--base-port', String(port)],
    {
      env: { ...process.env, PLATFORM_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  cluster.stdout!.on('data', (d) => (out += d));
  cluster.stderr!.on('data', (d) => (out += d));
  try {
    const code = await Promise.race([
      new Promise((r) => cluster.on('exit', r)),
      new Promise((r) => setTimeout(() => r('hung'), 90_000).unref()),
    ]);
    assert.is(code, 1, out.slice(-2000));
    assert.match(out, `api-1: platform failed to start: listen EADDRINUSE`);
    assert.match(
      out,
      'the cluster did not come up: api-1 exited before it came up',
      out.slice(-3000),
    );
    assert.equal(processesOf(heldDir), [], 'no node, worker or Postgres process is left');
  } finally {
    killProcessesOf(heldDir);
    cluster.kill('SIGKILL');
    holder.close();
    await rm(heldDir, { recursive: true, force: true });
  }
});

test.run();
