/**
 * Backups on a schedule, to the S3 bucket: PLATFORM_BACKUP_SCHEDULE adds the job to the worker's
 * crontab; the job (run by a real graphile-worker) writes archives under `<prefix>backups/`, keeps
 * the newest PLATFORM_BACKUP_KEEP, and `admin restore s3:<name>` restores one into a fresh data dir.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeWorkerUtils } from 'graphile-worker';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { crontabFor } from '../../worker/tasks.ts';
import { waitFor } from '../_lib/apps.ts';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { startWorker } from '../_lib/mail.ts';
import { ADMIN_ARGS, killProcessesOf } from '../_lib/processes.ts';
import { startS3 } from '../_lib/s3-server.ts';
import { freePort } from '../../src/lib/ports.ts';

const run = promisify(execFile);
const s3 = await startS3('platform-backups');
const h = await createHarness({
  ...s3.env,
  PLATFORM_BACKUP_TO: 's3',
  PLATFORM_BACKUP_KEEP: '2',
  PLATFORM_BACKUP_SCHEDULE: '0 3 * * *',
});
const worker = await startWorker(h);
const utils = await makeWorkerUtils({ pgPool: h.deps.pool });
const target = path.resolve('.data', 'test-scratch', `backup-s3-${process.pid}`);

test('the schedule is in the crontab only when set, and a bad one is refused at start', () => {
  assert.match(crontabFor(h.config), /^0 3 \* \* \* platform_backup$/m);
  assert.not.match(crontabFor(loadConfig({})), /platform_backup/);
  assert.throws(
    () => loadConfig({ PLATFORM_BACKUP_SCHEDULE: '0 25 * * *' }),
    /PLATFORM_BACKUP_SCHEDULE: must be five crontab fields within their ranges/,
  );
  assert.throws(() => loadConfig({ PLATFORM_BACKUP_TO: 's3' }), /PLATFORM_S3_BUCKET: required/);
});

test('scheduled backups land in the bucket, the newest two kept; one restores into a fresh data dir', async () => {
  const u = await newUser(h);
  await h.api('PUT /v0/apps', { key: u.api_key, body: site() as never });
  const backups = async () => (await s3.keys()).filter((k) => k.startsWith('backups/')).sort();
  const seen = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const job = await utils.addJob('platform_backup', {});
    // done when graphile-worker has removed the job (it succeeded: a failure stays with its error)
    await waitFor(async () => {
      const { rows } = await h.deps.pool.query(
        'select last_error from graphile_worker._private_jobs where id = $1',
        [job.id],
      );
      if (rows[0]?.last_error) throw new Error(`the backup job failed: ${rows[0].last_error}`);
      return rows.length === 0;
    }, 30_000);
    const fresh = (await backups()).filter((k) => !seen.has(k));
    assert.is(fresh.length, 1, `run ${i + 1} added one archive`);
    seen.add(fresh[0]!);
  }
  const kept = await backups();
  assert.is(kept.length, 2, `kept: ${kept.join(', ')}`);
  assert.equal(kept, [...seen].sort().slice(1), 'the oldest went');
  for (const k of kept) assert.match(k, /^backups\/platform-backup-\d{8}T\d{9}Z\.tar\.gz$/);

  const pg = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...s3.env,
    PLATFORM_DATA_DIR: target,
    PLATFORM_PG_PORT: String(pg),
    PLATFORM_SECRETS_KEY: h.config.secretsKey!,
    PLATFORM_LOG_LEVEL: 'silent',
  };
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  const out = await run(
    process.execPath,
    [...ADMIN_ARGS, 'restore', `s3:${path.basename(kept[1]!)}`],
    { env },
  ).catch((e) => e);
  const result = JSON.parse(String(out.stdout).trim().split('\n').pop() || '{}');
  assert.is(out.code ?? 0, 0, `${out.stdout}${out.stderr}`);
  assert.ok(result.rows > 0);
  const listed = await run(process.execPath, [...ADMIN_ARGS, 'list-operators'], {
    env,
  });
  const operators = JSON.parse(listed.stdout.trim().split('\n').pop()!).operators;
  assert.ok(operators.length >= 1, 'the restored server knows its operator');
});

test.after(async () => {
  await utils.release();
  await worker.stop();
  await h.close();
  await s3.close();
  killProcessesOf(target);
  await rm(target, { recursive: true, force: true });
});
test.run();
