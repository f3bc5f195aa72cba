/**
 * Backups as operators follow them: `POST /v0/operator/backups` queues one, the job worker takes it,
 * `GET /v0/operator/backups` lists it with its size and result and says how to restore; a scheduled
 * backup that fails is a failed run, an entry in the operators' action log and a metric.
 */
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import parsePrometheus from 'parse-prometheus-text-format';
import { makeWorkerUtils, type Runner } from 'graphile-worker';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitFor } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { startWorker } from '../_lib/mail.ts';

const scratch = path.resolve('.data', 'test-scratch', `backup-runs-${process.pid}`);
const TOKEN = 'metrics-token-backups-0123456789abcdef';
const h = await createHarness({
  PLATFORM_BACKUP_TO: path.join(scratch, 'kept'),
  PLATFORM_METRICS_TOKEN: TOKEN,
});
const operator = await newUser(h, 'operator'); // the first user of this fresh database
const someone = await newUser(h, 'someone');
let worker: Runner | undefined = await startWorker(h);

type Run = { backup_id: string; status: string; bytes: number | null; error: string | null };
const list = async () =>
  (await h.call('GET', '/v0/operator/backups', { key: operator.api_key })).body as {
    backups: Run[];
    to: string;
    keep: number;
    restore_command: string;
  };

test('an operator takes a backup from the API; it is listed with its size and result', async () => {
  const refused = await h.call('POST', '/v0/operator/backups', { key: someone.api_key });
  assert.is(refused.status, 403);
  const started = await h.call('POST', '/v0/operator/backups', { key: operator.api_key });
  assert.is(started.status, 202, started.text);
  // the answer reads the run after its job is queued: a worker may already have begun it
  assert.ok(['queued', 'running'].includes(started.body.status), started.text);
  assert.is(started.body.trigger, 'console');
  const id = started.body.backup_id as string;
  const done = await waitFor(async () => {
    const run = (await list()).backups.find((b) => b.backup_id === id);
    return run && run.status !== 'queued' && run.status !== 'running' ? run : undefined;
  }, 30_000);
  assert.is(done.status, 'succeeded', done.error ?? '');
  assert.ok(done.bytes! > 0);
  const files = await readdir(path.join(scratch, 'kept'));
  assert.is(files.length, 1);
  const overview = await list();
  assert.is(overview.to, path.join(scratch, 'kept'));
  // this server runs on DATABASE_URL, so the restore goes into an empty database
  assert.is(
    overview.restore_command,
    `DATABASE_URL=<an empty database> npm run admin -- restore ${path.join(scratch, 'kept')}/<name>.tar.gz`,
  );
  const actions = await h.call('GET', '/v0/operator/actions', { key: operator.api_key });
  assert.ok(actions.body.actions.some((a: { action: string }) => a.action === 'start_backup'));
});

test('a scheduled backup that fails is a failed run, an operator action and a metric', async () => {
  await worker?.stop();
  // a file where the backups folder should be: the write fails as a full or read-only disk would
  await writeFile(path.join(scratch, 'blocked'), 'not a folder');
  const broken = await createHarness({
    PLATFORM_BACKUP_TO: path.join(scratch, 'blocked', 'kept'),
    PLATFORM_METRICS_TOKEN: TOKEN,
  });
  worker = await startWorker(broken);
  const utils = await makeWorkerUtils({ pgPool: broken.deps.pool });
  await utils.addJob('platform_backup', {}, { maxAttempts: 1 }); // as the crontab adds it
  await utils.release();
  const failed = await waitFor(
    async () => (await list()).backups.find((b) => b.status === 'failed'),
    30_000,
  );
  assert.match(failed.error!, /ENOTDIR|not a directory/);
  const actions = await h.call('GET', '/v0/operator/actions', { key: operator.api_key });
  const logged = actions.body.actions.find((a: { action: string }) => a.action === 'backup_failed');
  assert.ok(logged, 'the failure is in the action log');
  assert.is(logged.actor_label, 'backup schedule');
  assert.is(logged.detail.backup_id, failed.backup_id);
  const scraped = await h.call('GET', '/metrics', { key: TOKEN });
  const family = (
    parsePrometheus(scraped.text) as {
      name: string;
      metrics: { labels: Record<string, string>; value: string }[];
    }[]
  ).find((f) => f.name === 'platform_backup_last_finished_timestamp_seconds')!;
  const at = (result: string) =>
    Number(family.metrics.find((m) => m.labels.result === result)!.value);
  assert.ok(
    at('failed') > at('succeeded') && at('succeeded') > 0,
    'the failure is newer than the last success',
  );
  await worker.stop();
  worker = undefined;
  await broken.close();
});

test.after(async () => {
  await worker?.stop();
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});
test.run();
