-- App users (auth.mode app_users): per app, never platform users. Sessions are bearer tokens in a
-- host-only cookie on the app origin; only their SHA-256 is stored.
create table app_users (
  id text primary key,
  app_id text not null references apps (id),
  email text not null,
  password_hash text not null,
  roles jsonb not null default '[]',
  verified boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index app_users_email_key on app_users (app_id, lower(email));

create table app_sessions (
  token_hash bytea primary key,
  app_id text not null references apps (id),
  user_id text not null references app_users (id),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index app_sessions_user_idx on app_sessions (user_id);
create index app_sessions_expires_idx on app_sessions (expires_at);
