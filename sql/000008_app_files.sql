-- Files in an app's declared stores; bytes live in blobs (content-addressed per account).
create table app_files (
  id text primary key,
  app_id text not null references apps (id),
  store text not null,
  filename text not null,
  content_type text not null,
  size bigint not null,
  sha256 bytea not null,
  owner_user_id text,
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index app_files_app_store_idx on app_files (app_id, store, created_at);
