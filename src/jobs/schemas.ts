/** The job-run request and answer (`POST /v0/apps/<app_id>/jobs/<job_name>/runs`). */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';

export const RunJobBody = component(
  'RunJobRequest',
  v.strictObject({ payload: v.optional(v.unknown()) }),
);

export const JobRun = component(
  'JobRun',
  v.strictObject({
    app_id: v.string(),
    release_id: v.string(),
    job_name: v.string(),
    /** the platform's id, carried by every `job.*` event of this run */
    job_id: v.string(),
    /** graphile-worker's id of the queued job */
    worker_job_id: v.nullable(v.string()),
    run_at: DateTime,
    max_attempts: v.number(),
    status: v.literal('queued'),
  }),
);
export type JobRun = v.InferOutput<typeof JobRun>;
