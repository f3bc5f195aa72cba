/**
 * `POST /v0/apps/<app_id>/jobs/<job_name>/runs`: run a declared job of the live release now, as
 * `platform jobs run` and `platform dev` do (docs/decisions/jobs-and-webhooks.md "Running a job now").
 */
import { Hono } from 'hono';
import { appAccess } from '../apps/access.ts';
import { ApiError, errors } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, parseWith } from '../http/validate.ts';
import { ResourceName } from '../manifest/schema.ts';
import { manifestOf } from '../manifest/stored.ts';
import { releaseWithAccount } from '../releases/queries.ts';
import { MAX_JOB_PAYLOAD_BYTES, payloadProblem, queueJob } from './enqueue.ts';
import { JobRun, RunJobBody } from './schemas.ts';

const run = operation({
  operationId: 'runJob',
  summary: 'Run a declared job now',
  description:
    'Enqueues the job on the live release with the given `payload` (default `null`), at once, with the attempts the manifest declares; its outcome arrives as the usual `job.*` events (`job.enqueued` now, then `job.succeeded`, `job.retry`, `job.failed` or `job.blocked`). A job the live release does not declare: 404. An app with no live release: 409 `conflict`.',
  tags: ['Jobs'],
  responses: { 202: JobRun },
  errors: ['conflict', 'payload_too_large'],
});

export function jobRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.post(
    '/:app_id/jobs/:job_name/runs',
    run,
    appAccess('jobs.run'),
    jsonBody(RunJobBody, { optional: true, maxBytes: MAX_JOB_PAYLOAD_BYTES + 1024 }),
    async (c) => {
      const { deps, app, actor, requestId } = c.var;
      const jobName = parseWith(ResourceName, c.req.param('job_name'), 'job name');
      const payload = bodyOf(c, RunJobBody).payload ?? null;
      const tooLarge = payloadProblem(payload);
      if (tooLarge)
        throw new ApiError('payload_too_large', tooLarge, { max_bytes: MAX_JOB_PAYLOAD_BYTES });
      if (!app.live_release_id || app.deleted_at)
        throw new ApiError(
          'conflict',
          'The app has no live release to run a job on: publish it first.',
          { app_id: app.id },
        );
      const release = await releaseWithAccount(deps.db, app.live_release_id);
      const jobs = release ? (manifestOf(release.manifest).resources.jobs ?? {}) : {};
      const spec = Object.hasOwn(jobs, jobName) ? jobs[jobName] : undefined;
      if (!spec) throw errors.notFound(`Job "${jobName}" of the live release`);
      const maxAttempts = spec.max_attempts ?? 3;
      const added = await queueJob(deps.db, {
        base: {
          app_id: app.id,
          account_id: app.account_id,
          release_id: app.live_release_id,
          api_key_id: actor.apiKeyId,
          request_id: requestId,
        },
        appId: app.id,
        jobName,
        payload,
        maxAttempts,
        source: 'api',
        message: `Job ${jobName} enqueued to run now.`,
      });
      return run.reply(c, 202, {
        app_id: app.id,
        release_id: app.live_release_id,
        job_name: jobName,
        job_id: added.job_id,
        worker_job_id: added.worker_job_id,
        run_at: added.run_at,
        max_attempts: maxAttempts,
        status: 'queued',
      });
    },
  );
  return r;
}
