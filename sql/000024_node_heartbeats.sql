-- Every running service process (any role) beats a row here every few seconds and removes it when it
-- stops: which nodes serve, and what each can read. `blob_bucket` names the S3-compatible bucket the node
-- is configured for (null: none), so `admin migrate-blobs --to s3` can refuse while a live node could not
-- read the blobs it would move (src/nodes/heartbeat.ts).
create table node_heartbeats (
  node_id text primary key,
  host text not null,
  pid integer not null,
  role text not null,
  blob_bucket text,
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
