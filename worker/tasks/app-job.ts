/**
 * `app_job`: runs the `job(event, ctx)` handler of the app's live release in the sandbox.
 * Outcomes: job.succeeded; a throw → job.retry (graphile-worker retries with exponential
 * backoff) until max_attempts → job.failed; an unpublished app, a job the live release no
 * longer declares, or no `job` handler → job.blocked (not retried).
 */
import type { Task } from 'graphile-worker';
import * as v from 'valibot';
import type { Deps } from '../../src/deps.ts';
import { recordEvents, type NewEvent } from '../../src/events/record.ts';
import { appOrigin } from '../../src/apps/mappers.ts';
import { logEvents } from '../../src/runtime/log-events.ts';
import type { NodeRuntime } from '../../src/runtime/node-runtime.ts';
import { invokeRelease } from '../../src/runtime/invoke.ts';
import { servingBlock, type ServingBlock } from '../../src/releases/live.ts';
import { appPointer } from '../../src/releases/queries.ts';
import { releaseWaitingSlot } from '../../src/jobs/backlog.ts';

const BLOCK_REASONS: Record<ServingBlock, string> = {
  app_takedown: 'the app is taken down',
  account_suspended: 'the account is suspended',
  app_suspended: 'the app is suspended',
};

const Payload = v.object({
  job_id: v.string(),
  app_id: v.string(),
  job_name: v.string(),
  payload: v.unknown(),
  scheduled_for: v.string(),
  source: v.picklist(['enqueue', 'schedule', 'webhook', 'api']),
});

/**
 * When graphile-worker runs a failed job again: exp(min(attempts, 10)) seconds on (its failJobs
 * SQL, which exports no function to call). Said in the job.retry event so a person knows when;
 * test/jobs/app-jobs.test.ts holds it to the run_at graphile-worker actually sets.
 */
export function retryDelaySeconds(attempts: number): number {
  return Math.exp(Math.min(attempts, 10));
}

export function appJobTask(deps: Deps, runtime: NodeRuntime): Task {
  const run = runAppJob(deps, runtime);
  return async (raw, helpers) => {
    const parsed = v.safeParse(Payload, raw);
    if (!parsed.success) {
      helpers.logger.error(`app_job: invalid payload, dropped: ${parsed.issues[0]?.message}`);
      return; // a malformed payload can never succeed: do not retry it
    }
    const p = parsed.output;
    // a job app code enqueued stops counting against its app's waiting jobs once it is done for good
    let done = false;
    try {
      await run(p, helpers);
      done = true;
    } catch (err) {
      done = helpers.job.attempts >= helpers.job.max_attempts;
      throw err;
    } finally {
      if (done && p.source === 'enqueue')
        await releaseWaitingSlot(deps.db, p.app_id).catch((err) =>
          helpers.logger.error(`app_job: could not count a finished job: ${String(err)}`),
        );
    }
  };
}

function runAppJob(deps: Deps, runtime: NodeRuntime) {
  return async (p: v.InferOutput<typeof Payload>, helpers: Parameters<Task>[1]): Promise<void> => {
    const attempt = helpers.job.attempts;
    const maxAttempts = helpers.job.max_attempts;
    const app = await appPointer(deps.db, p.app_id);
    if (!app) return; // the app row is gone: nothing to run or report
    const base = { app_id: app.id, account_id: app.account_id };
    const meta = {
      job_id: p.job_id,
      job_name: p.job_name,
      attempt,
      max_attempts: maxAttempts,
      source: p.source,
    };
    const record = (events: NewEvent[]) => recordEvents(deps.db, events);
    const blocked = (reason: string) =>
      record([
        {
          ...base,
          release_id: app.live_release_id,
          type: 'job.blocked',
          severity: 'warn',
          message: `Job ${p.job_name} is blocked: ${reason}.`,
          metadata: { ...meta, reason },
        },
      ]);

    if (!app.live_release_id || app.deleted_at) return blocked('the app is not published');
    const block = servingBlock(app);
    if (block) return blocked(BLOCK_REASONS[block]);
    const release = await runtime.caches.release(app.live_release_id);
    if (!release) return blocked('the live release could not be loaded');
    if (
      !release.manifest.resources.jobs ||
      !Object.hasOwn(release.manifest.resources.jobs, p.job_name)
    )
      return blocked('the live release does not declare this job');
    if (!release.manifest.runtime.server_entry)
      return blocked('the live release has no server_entry');

    const event = {
      job_id: p.job_id,
      job_name: p.job_name,
      payload: p.payload,
      attempt,
      max_attempts: maxAttempts,
      scheduled_for: p.scheduled_for,
    };
    const result = await invokeRelease(deps, runtime, {
      handler: 'job',
      app: { appId: app.id, accountId: app.account_id, planKey: app.plan_key },
      release,
      event: JSON.stringify(event),
      request: {
        method: 'POST',
        url: `${appOrigin(deps.config, app.id)}/_platform/jobs/${p.job_name}`,
        headers: [],
      },
    });
    const rel = { ...base, release_id: release.releaseId };
    // the job's log lines share the app's allowance with its requests' (src/events/writer.ts); its outcome is always written
    const logs = runtime.events.admit(logEvents(rel, result.logs));
    if (result.ok) {
      await record([
        ...logs,
        {
          ...rel,
          type: 'job.succeeded',
          message: `Job ${p.job_name} succeeded.`,
          metadata: { ...meta, cpu_ms: result.cpuMs ?? null },
        },
      ]);
      return;
    }
    if (result.error?.kind === 'no-handler') {
      await record(logs);
      return blocked('the server module has no job() handler');
    }
    const error = {
      kind: result.error?.kind ?? 'crash',
      error: result.error?.message ?? null,
      stack: result.error?.stack?.slice(0, 4000) ?? null,
    };
    if (attempt < maxAttempts) {
      const next = new Date(Date.now() + retryDelaySeconds(attempt) * 1000).toISOString();
      await record([
        ...logs,
        {
          ...rel,
          type: 'job.retry',
          severity: 'warn',
          message: `Job ${p.job_name} failed (attempt ${attempt} of ${maxAttempts}); it will run again.`,
          metadata: { ...meta, ...error, next_run_at: next },
        },
      ]);
    } else {
      await record([
        ...logs,
        {
          ...rel,
          type: 'job.failed',
          severity: 'error',
          message: `Job ${p.job_name} failed after ${attempt} attempts.`,
          metadata: { ...meta, ...error },
        },
      ]);
    }
    throw new Error(`app job ${p.job_id} failed: ${error.kind}: ${error.error}`);
  };
}
