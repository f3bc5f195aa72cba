-- Compressed variants of an account's blobs (brotli and gzip), made once per content at publish.
-- variant_sha256 names the compressed bytes in `blobs`; null records that compressing did not pay
-- (so an identical republish does not try again).
create table blob_variants (
  account_id text not null,
  sha256 bytea not null,
  encoding text not null check (encoding in ('br', 'gzip')),
  variant_sha256 bytea,
  size integer,
  primary key (account_id, sha256, encoding)
);
