/**
 * App jobs: `ctx.jobs.enqueue(job_name, payload, { delay_seconds })` adds a graphile-worker job
 * inside the same transaction as its `job.enqueued` event, so a rolled-back caller leaves none.
 */
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { recordEvents, type NewEvent } from '../events/record.ts';
import { randomToken } from '../lib/ids.ts';
import type { Manifest } from '../manifest/schema.ts';
import * as v from 'valibot';
import { ResourceName } from '../manifest/schema.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import { jobTurns } from './turns.ts';
import { takeWaitingSlot } from './backlog.ts';
import type { PlanCatalogue } from '../plans/catalogue.ts';

export const MAX_JOB_PAYLOAD_BYTES = 64 * 1024;
export const MAX_JOB_DELAY_SECONDS = 7 * 24 * 3600;

/** What the `app_job` task receives. */
export type AppJobPayload = {
  job_id: string;
  app_id: string;
  job_name: string;
  payload: unknown;
  scheduled_for: string;
  source: 'enqueue' | 'schedule' | 'webhook' | 'api';
};

export type JobTarget = {
  appId: string;
  accountId: string;
  releaseId: string;
  manifest: Manifest;
  requestId?: string | null;
  /** the account's plan (its binding limits apply to the call); Free when unknown */
  planKey?: string;
};

/** A guest-visible failure: `code` reaches app code on the thrown error. */
/** Adds an app job in the caller's transaction (`db` may be a transaction). Returns its job id. */
export async function addAppJob(
  db: Executor,
  job: Omit<AppJobPayload, 'job_id' | 'scheduled_for'> & {
    delaySeconds?: number;
    maxAttempts: number;
    jobKey?: string;
    runAt?: Date;
  },
): Promise<{ job_id: string; run_at: string; worker_job_id: string | null }> {
  const jobId = `job_${randomToken(20)}`;
  const runAt = job.runAt ?? new Date(Date.now() + (job.delaySeconds ?? 0) * 1000);
  const payload: AppJobPayload = {
    job_id: jobId,
    app_id: job.app_id,
    job_name: job.job_name,
    payload: job.payload,
    scheduled_for: runAt.toISOString(),
    source: job.source,
  };
  // a job_key that is already queued keeps the existing job (`preserve_run_at`): the id is that job's
  const { rows } = await sql<{ id: string | null }>`select (graphile_worker.add_job(
      identifier => 'app_job',
      payload => ${JSON.stringify(payload)}::json,
      run_at => ${runAt}::timestamptz,
      max_attempts => ${job.maxAttempts}::int,
      job_key => ${job.jobKey ?? null}::text,
      priority => ${jobTurns.priorityFor(job.app_id)}::int,
      job_key_mode => 'preserve_run_at')).id::text as id`.execute(db);
  return { job_id: jobId, run_at: runAt.toISOString(), worker_job_id: rows[0]?.id ?? null };
}

/** Why a job payload cannot be queued (too large once serialised), or undefined. */
export function payloadProblem(payload: unknown): string | undefined {
  const size = Buffer.byteLength(JSON.stringify(payload ?? null));
  return size > MAX_JOB_PAYLOAD_BYTES
    ? `The job payload is ${size} bytes; at most ${MAX_JOB_PAYLOAD_BYTES}.`
    : undefined;
}

/** Adds a declared job and its `job.enqueued` event in one transaction (a rolled-back caller leaves neither). */
export async function queueJob(
  db: Db,
  run: {
    base: Omit<NewEvent, 'type' | 'message' | 'metadata'>;
    appId: string;
    jobName: string;
    payload: unknown;
    maxAttempts: number;
    source: AppJobPayload['source'];
    delaySeconds?: number;
    message: string;
    plans?: PlanCatalogue;
  },
): Promise<{ job_id: string; run_at: string; worker_job_id: string | null }> {
  return db.transaction().execute(async (trx) => {
    const added = await addAppJob(trx, {
      app_id: run.appId,
      job_name: run.jobName,
      payload: run.payload ?? null,
      source: run.source,
      delaySeconds: run.delaySeconds,
      maxAttempts: run.maxAttempts,
    });
    await recordEvents(trx, [
      {
        ...run.base,
        type: 'job.enqueued',
        message: run.message,
        metadata: {
          job_id: added.job_id,
          job_name: run.jobName,
          run_at: added.run_at,
          max_attempts: run.maxAttempts,
          source: run.source,
        },
      },
    ]);
    // Jobs app code enqueues count against the plan's jobs.waiting.max (src/jobs/backlog.ts). Last, so
    // the app's count row is locked only for the commit (one app's enqueues wait on each other there);
    // past the bound this throws and the job and its event roll back with it.
    if (run.source === 'enqueue' && run.plans) await takeWaitingSlot(trx, run.plans, run.appId);
    return added;
  });
}

/** `ctx.jobs.enqueue` for declared jobs only; anything else is a catchable error and `job.enqueue_failed`. */
export async function enqueueFromApp(
  deps: Deps,
  target: JobTarget,
  name: unknown,
  payload: unknown,
  opts: unknown,
): Promise<{ job_id: string }> {
  const options = (opts ?? undefined) as { delay_seconds?: unknown } | undefined;
  const base = {
    app_id: target.appId,
    account_id: target.accountId,
    release_id: target.releaseId,
    request_id: target.requestId ?? null,
  };
  // The event repeats the name only when it is name-shaped: app code may pass anything here,
  // request data included, and events are readable by every member of the account.
  const shownName = v.is(ResourceName, name) ? name : null;
  const fail = async (
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
  ): Promise<never> => {
    await recordEvents(deps.db, [
      {
        ...base,
        type: 'job.enqueue_failed',
        severity: 'warn',
        message,
        metadata: { job_name: shownName, code },
      },
    ]);
    throw new ApiError(code, message, details);
  };
  const jobs = target.manifest.resources.jobs ?? {};
  if (typeof name !== 'string' || !Object.hasOwn(jobs, name)) {
    return fail(
      'job_not_declared',
      shownName
        ? `Job "${shownName}" is not declared in this release's resources.jobs.`
        : "The job name is not one of this release's resources.jobs (nor a valid job name).",
    );
  }
  const tooLarge = payloadProblem(payload);
  if (tooLarge) return fail('payload_too_large', tooLarge);
  const delay = options?.delay_seconds ?? 0;
  if (
    typeof delay !== 'number' ||
    !Number.isInteger(delay) ||
    delay < 0 ||
    delay > MAX_JOB_DELAY_SECONDS
  ) {
    return fail(
      'invalid_delay',
      `delay_seconds must be a whole number from 0 to ${MAX_JOB_DELAY_SECONDS}.`,
    );
  }
  const maxAttempts = jobs[name]!.max_attempts ?? 3;
  try {
    const added = await queueJob(deps.db, {
      base,
      appId: target.appId,
      jobName: name,
      payload,
      maxAttempts,
      source: 'enqueue',
      delaySeconds: delay,
      message: `Job ${name} enqueued.`,
      plans: deps.config.plans,
    });
    return { job_id: added.job_id };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'quota_exceeded')
      return fail(err.code, err.message, err.details);
    throw err;
  }
}
