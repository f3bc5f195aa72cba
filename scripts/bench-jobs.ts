/**
 * Job speed: enqueue-to-start latency (p50, p99) and jobs/s for a trivial app job handler (QuickJS)
 * next to a graphile-worker no-op task, in the same run on the same Postgres; and how fast app code's
 * enqueues go for one app with and without its waiting-jobs count.
 *   npm run bench:jobs [-- --jobs 2000 --concurrency 8]
 */
import { parseArgs } from 'node:util';
import { makeWorkerUtils, run, type Task } from 'graphile-worker';
import { workerLogger } from '../src/boot.ts';
import { addAppJob, queueJob } from '../src/jobs/enqueue.ts';
import { WORKER_PRESET } from '../worker/runner.ts';
import { taskList } from '../worker/tasks.ts';
import { startBenchEnv } from './bench-env.ts';
import { percentile } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    latency: { type: 'string', default: '200' },
  },
});
const N = Number(values.jobs);
const SEQ = Number(values.latency);
const env = await startBenchEnv();
const runtime = env.server!.runtime;
await runtime.sandbox().warm();

const source = Buffer.from('export default { job(event) { } };').toString('base64');
const pub = await fetch(`${env.url}/v0/apps`, {
  method: 'PUT',
  headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    app: { name: 'jobs' },
    runtime: { static_root: 'public', server_entry: 'server.js' },
    files: [
      {
        path: 'public/index.html',
        content_type: 'text/html',
        content_base64: Buffer.from('x').toString('base64'),
      },
      { path: 'server.js', content_type: 'text/javascript', content_base64: source },
    ],
    resources: { jobs: { tick: {} } },
  }),
}).then((r) => r.json());

// Both tasks report when they start; latency = start - enqueue time carried in the payload.
const starts = new Map<string, number[]>([
  ['noop', []],
  ['app', []],
]);
const done = { noop: 0, app: 0 };
const tasks = taskList(env.deps, runtime);
const appJob = tasks.app_job as Task;
tasks.app_job = async (payload, helpers) => {
  starts
    .get('app')!
    .push(Date.now() - Date.parse((payload as { scheduled_for: string }).scheduled_for));
  await appJob(payload, helpers);
  done.app++;
};
tasks.bench_noop = async (payload) => {
  starts.get('noop')!.push(Date.now() - (payload as { t: number }).t);
  done.noop++;
};
const runner = await run({
  pgPool: env.deps.pool,
  taskList: tasks,
  concurrency: Number(values.concurrency),
  noHandleSignals: true,
  pollInterval: 1000,
  logger: workerLogger(),
  preset: WORKER_PRESET,
});
const utils = await makeWorkerUtils({ pgPool: env.deps.pool });

const wait = async (kind: 'noop' | 'app', target: number) => {
  while (done[kind] < target) await new Promise((r) => setTimeout(r, 2));
};
const addNoop = () => utils.addJob('bench_noop', { t: Date.now() });
const addApp = () =>
  addAppJob(env.deps.db, {
    app_id: pub.app_id,
    job_name: 'tick',
    payload: null,
    source: 'enqueue',
    maxAttempts: 3,
  });

const results: { label: string; p50: number; p99: number; rps: number }[] = [];
for (const [kind, label, add] of [
  ['noop', 'graphile-worker no-op task', addNoop],
  ['app', 'app job (QuickJS handler)', addApp],
] as const) {
  // Latency: one job at a time.
  starts.set(kind, []);
  for (let i = 0; i < SEQ; i++) {
    await add();
    await wait(kind, done[kind] + 1);
  }
  const lat = starts.get(kind)!;
  const p50 = percentile(lat, 50);
  const p99 = percentile(lat, 99);
  // Throughput: N enqueued at once, timed to the last completion.
  const before = done[kind];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: N }, () => add()));
  await wait(kind, before + N);
  results.push({ label, p50, p99, rps: N / ((performance.now() - t0) / 1000) });
}
await runner.stop();
await utils.release();

// Enqueues as app code makes them (the job and its event in one transaction, and the app's waiting count, one row
// per app, src/jobs/backlog.ts), 8 callers at once for one app; delayed an hour so none runs meanwhile.
const enqueueRate = async (counted: boolean) => {
  const base = { app_id: pub.app_id, account_id: pub.account_id };
  const one = () =>
    queueJob(env.deps.db, {
      base,
      appId: pub.app_id,
      jobName: 'tick',
      payload: null,
      maxAttempts: 3,
      source: 'enqueue',
      delaySeconds: 3600,
      message: 'bench',
      plans: counted ? env.deps.config.plans : undefined,
    });
  let left = N;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await one();
    }),
  );
  return N / ((performance.now() - t0) / 1000);
};
const uncounted = await enqueueRate(false);
const counted = await enqueueRate(true);
console.log(
  `\n${SEQ} sequential jobs for latency, ${N} queued at once for throughput, concurrency ${values.concurrency}\n`,
);
console.log('task'.padEnd(30), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'jobs/s'.padStart(9));
for (const r of results)
  console.log(
    r.label.padEnd(30),
    String(r.p50).padStart(8),
    String(r.p99).padStart(8),
    r.rps.toFixed(0).padStart(9),
  );
console.log(
  `\napp job throughput: ${(results[1]!.rps / results[0]!.rps).toFixed(2)}x the no-op task`,
);
console.log(
  `app code's enqueues, 8 at once for one app: ${uncounted.toFixed(0)}/s without the waiting count, ${counted.toFixed(0)}/s with it`,
);
await env.close();
process.exit(0);
