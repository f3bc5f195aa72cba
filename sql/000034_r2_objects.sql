-- Workers R2 buckets (env.BUCKET.put/get/list/delete, multipart uploads), an app's own: each object's
-- bytes are a blob of the account (the blob store, S3 when configured), its key its UTF-8 bytes
-- (R2 lists in byte order), its etag the MD5 of its bytes as R2 makes it.
create table r2_objects (
  app_id text not null references apps (id) on delete cascade,
  bucket text not null,
  key bytea not null,
  version text not null,
  sha256 bytea not null,
  size bigint not null,
  etag text not null,
  checksums jsonb not null default '{}',
  http_metadata jsonb not null default '{}',
  custom_metadata jsonb not null default '{}',
  uploaded timestamptz not null default now(),
  primary key (app_id, bucket, key)
);
create index r2_objects_blob_idx on r2_objects (sha256);

create table r2_uploads (
  id text primary key,
  app_id text not null references apps (id) on delete cascade,
  bucket text not null,
  key bytea not null,
  http_metadata jsonb not null default '{}',
  custom_metadata jsonb not null default '{}',
  created_at timestamptz not null default now()
);

create table r2_upload_parts (
  upload_id text not null references r2_uploads (id) on delete cascade,
  part_number integer not null,
  sha256 bytea not null,
  size bigint not null,
  etag text not null,
  primary key (upload_id, part_number)
);
create index r2_upload_parts_blob_idx on r2_upload_parts (sha256);
