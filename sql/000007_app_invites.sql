-- Invites to become an app user with given roles (never platform access). Only the token's hash is stored.
create table app_invites (
  id text primary key,
  app_id text not null references apps (id),
  email text not null,
  roles jsonb not null default '[]',
  token_hash bytea not null unique,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  created_by_user_id text,
  created_at timestamptz not null default now()
);
create index app_invites_app_idx on app_invites (app_id, created_at);
