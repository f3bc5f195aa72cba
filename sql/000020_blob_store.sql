-- Blob bytes in Postgres (`data`) or in an S3-compatible bucket under <prefix>blobs/<account_id>/<sha256 hex>
-- (`data` null). `last_used_at` is touched whenever a publish or an upload reuses a blob: retention
-- deletes only blobs nobody needs that were not used within the grace period, so a publish in
-- flight never loses one.
alter table blobs alter column data drop not null;
alter table blobs add column stored_in text not null default 'postgres' check (stored_in in ('postgres', 's3'));
alter table blobs add column last_used_at timestamptz not null default now();
alter table blobs add constraint blobs_bytes_somewhere check ((stored_in = 'postgres') = (data is not null));
-- app store files name their bytes by hash: retention looks them up per account
create index app_files_sha256_idx on app_files (sha256);
