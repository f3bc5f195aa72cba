-- Every backup the server took or tried: from the schedule, the console or `npm run admin -- backup`.
-- The Operator section lists them (when, size, result) and /metrics reads the last success and
-- failure from here, so a failing schedule is seen on every node. A row still `running` when a
-- backup of this database is restored is marked failed by the restore (that run never finished there).
create table backup_runs (
  id text primary key,
  trigger text not null check (trigger in ('schedule', 'console', 'admin')),
  requested_by text,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  queued_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  location text,
  bytes bigint,
  rows bigint,
  error text
);
create index backup_runs_queued_idx on backup_runs (queued_at desc);
