-- Workers KV namespaces (env.NAME.get/put/list/delete), an app's own like its data rows: scoped to
-- the app, kept across releases, erased with its data, counted in its storage. A key is its UTF-8
-- bytes (KV allows any string up to 512 bytes, NUL included, and lists keys in byte order). A value
-- up to 64 KiB is in the row; a larger one is a blob of the account (sha256), as app files are.
create table kv_entries (
  app_id text not null references apps (id) on delete cascade,
  namespace text not null,
  key bytea not null,
  value bytea,
  sha256 bytea,
  size integer not null,
  metadata jsonb,
  expires_at timestamptz,
  updated_at timestamptz not null default now(),
  primary key (app_id, namespace, key),
  check ((value is null) <> (sha256 is null))
);
create index kv_entries_expires_idx on kv_entries (expires_at) where expires_at is not null;
create index kv_entries_blob_idx on kv_entries (sha256) where sha256 is not null;
