-- Apps, immutable releases, content-addressed blobs, provisioned resources, secrets, events.
create table apps (
  id text primary key,
  account_id text not null references accounts (id),
  name text not null,
  summary text,
  visibility text not null default 'public' check (visibility in ('public', 'private')),
  tags jsonb not null default '[]',
  live_release_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index apps_account_idx on apps (account_id, created_at);

-- Bytes stored once per account and content hash; release files and app files point here.
create table blobs (
  account_id text not null references accounts (id),
  sha256 bytea not null,
  size bigint not null,
  data bytea not null,
  created_at timestamptz not null default now(),
  primary key (account_id, sha256)
);
alter table blobs alter column data set storage external; -- already-compressed media: skip TOAST compression

create table releases (
  id text primary key,
  app_id text not null references apps (id),
  seq integer not null,
  manifest jsonb not null,
  message text,
  provenance jsonb,
  created_by_api_key_id text,
  created_by_key_prefix text,
  activation_status text not null check (activation_status in ('live', 'inactive', 'pending_secrets', 'requires_migration', 'failed')),
  activation_reasons jsonb not null default '[]',
  missing_secrets jsonb not null default '[]',
  activated_at timestamptz,
  previous_release_id text,
  created_at timestamptz not null default now(),
  unique (app_id, seq)
);
alter table apps add constraint apps_live_release_fk foreign key (live_release_id) references releases (id);

create table release_files (
  release_id text not null references releases (id) on delete cascade,
  path text not null,
  content_type text not null,
  sha256 bytea not null,
  size bigint not null,
  primary key (release_id, path)
);

-- What has been provisioned for an app: monotonic, merged across releases.
create table app_resources (
  app_id text not null references apps (id),
  resource_type text not null,
  resource_name text not null,
  spec jsonb not null,
  provisioned_release_id text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (app_id, resource_type, resource_name)
);

create table app_secrets (
  app_id text not null references apps (id),
  name text not null,
  sealed bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (app_id, name)
);

create table app_events (
  id bigserial primary key,
  app_id text not null references apps (id),
  account_id text not null,
  type text not null,
  severity text not null check (severity in ('debug', 'info', 'warn', 'error')),
  message text not null,
  metadata jsonb not null default '{}',
  release_id text,
  app_user_id text,
  api_key_id text,
  request_id text,
  created_at timestamptz not null default now()
);
create index app_events_app_idx on app_events (app_id, id desc);
create index app_events_app_type_idx on app_events (app_id, type, id desc);
create index app_events_created_idx on app_events (created_at);
