-- Development outbox (no SMTP_URL): every message the platform would send, for the operator to read.
create table dev_outbox (
  id bigserial primary key,
  to_address text not null,
  subject text not null,
  body text not null,
  created_at timestamptz not null default now()
);

-- E-mail verification links for app users; only the token's hash is stored.
create table app_email_verifications (
  token_hash bytea primary key,
  app_id text not null references apps (id),
  user_id text not null references app_users (id),
  expires_at timestamptz not null,
  used_at timestamptz
);
