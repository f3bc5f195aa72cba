-- How many jobs each app's code has enqueued that have not finished (run to success, failed for good or
-- been blocked): `ctx.jobs.enqueue` is refused past the plan's `jobs.waiting.max` (src/jobs/backlog.ts).
-- Kept in the enqueue's transaction and by the app_job task; the hourly retention task recounts it from
-- the job queue, so a count that drifted (a worker killed mid-job) is corrected.
create table app_job_backlog (
  app_id text primary key references apps (id) on delete cascade,
  waiting integer not null default 0 check (waiting >= 0)
);
