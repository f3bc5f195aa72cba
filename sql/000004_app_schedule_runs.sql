-- One row per scheduled job period that has been enqueued: a period never runs twice.
create table app_schedule_runs (
  app_id text not null references apps (id),
  job_name text not null,
  period_start timestamptz not null,
  job_id text not null,
  created_at timestamptz not null default now(),
  primary key (app_id, job_name, period_start)
);
create index app_schedule_runs_created_idx on app_schedule_runs (created_at);
