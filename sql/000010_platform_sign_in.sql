-- Passwordless sign-in for platform users: e-mail links (and account invitations, which use the same
-- links), pending sign-ups, console sessions, device authorizations for the CLI, and the abuse limits
-- every node shares. Every bearer secret is stored only as its SHA-256.

-- Invitations into an account; accepted through an e-mail link.
create table account_invitations (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  email text not null,
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  invited_by_user_id text references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  revoked_at timestamptz
);
create index account_invitations_account_idx on account_invitations (account_id, created_at);

-- One-time e-mail links: sign-in (15 minutes) or an invitation (7 days).
create table email_auth_tokens (
  token_hash bytea primary key,
  email text not null,
  invitation_id text references account_invitations (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index email_auth_tokens_expiry_idx on email_auth_tokens (expires_at);

-- A confirmed e-mail with no user yet: the pending-signup cookie's token.
create table pending_signups (
  token_hash bytea primary key,
  email text not null,
  invitation_id text references account_invitations (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);

-- Console sessions (cookie __Host-platform_session).
create table console_sessions (
  id text primary key,
  token_hash bytea not null unique,
  user_id text not null references users (id) on delete cascade,
  csrf_token text not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index console_sessions_user_idx on console_sessions (user_id);

-- RFC 8628 device authorizations for `platform login`.
create table device_authorizations (
  id text primary key,
  device_code_hash bytea not null unique,
  user_code text not null,
  client_name text not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'consumed')),
  interval_seconds integer not null default 5,
  last_polled_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  approved_by_user_id text references users (id) on delete cascade,
  account_id text references accounts (id) on delete cascade,
  api_key_id text references api_keys (id) on delete set null,
  decided_at timestamptz
);
create unique index device_authorizations_pending_code_key on device_authorizations (user_code) where status = 'pending';

-- Fixed-window counters for abuse limits, shared by every node.
create table abuse_counters (
  key text not null,
  window_start timestamptz not null,
  hits integer not null,
  expires_at timestamptz not null,
  primary key (key, window_start)
);
create index abuse_counters_expiry_idx on abuse_counters (expires_at);
