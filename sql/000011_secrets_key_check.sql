-- A known value sealed with PLATFORM_SECRETS_KEY: a process whose key cannot open it refuses to start,
-- so no node ever reads app secrets with the wrong key.
create table secrets_key_check (
  id integer primary key check (id = 1),
  sealed bytea not null,
  created_at timestamptz not null default now()
);
