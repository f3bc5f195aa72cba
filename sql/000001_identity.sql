-- Platform identity: users, accounts, memberships with roles, API keys.
create table users (
  id text primary key,
  email text not null,
  username text,
  default_account_id text,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create unique index users_username_key on users (username) where username is not null;

create table accounts (
  id text primary key,
  name text not null,
  owner_user_id text not null references users (id),
  plan_key text not null default 'free',
  created_at timestamptz not null default now()
);
alter table users add constraint users_default_account_fk
  foreign key (default_account_id) references accounts (id) deferrable initially deferred;

create table memberships (
  account_id text not null references accounts (id) on delete cascade,
  user_id text not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (account_id, user_id)
);
create index memberships_user_idx on memberships (user_id);

create table api_keys (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  name text not null,
  key_prefix text not null,
  key_hash bytea not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create unique index api_keys_hash_key on api_keys (key_hash);
create index api_keys_user_idx on api_keys (user_id, created_at);
