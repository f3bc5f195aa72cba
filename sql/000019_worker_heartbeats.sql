-- Each job worker process beats here every few seconds, one row per graphile-worker worker id it runs.
-- A surviving worker that sees a peer's beat go stale releases that peer's locked jobs
-- (graphile_worker.force_unlock_workers), so a worker killed with SIGKILL holds no job for long.
create table worker_heartbeats (
  worker_id text primary key,
  process_id text not null,
  host text not null,
  pid integer not null,
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
create index worker_heartbeats_process_idx on worker_heartbeats (process_id);
