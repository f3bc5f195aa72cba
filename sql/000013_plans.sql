-- Plans and account standing: where an account's plan came from, its billing access, operator
-- flags on accounts and apps, monthly usage per account, and the alias routes (slugs, custom
-- domains) that downgrades disable rather than delete.
alter table accounts
  add column entitlement_source text not null default 'default' check (entitlement_source in ('default', 'manual', 'stripe')),
  add column billing_access_state text not null default 'active' check (billing_access_state in ('active', 'past_due_grace', 'restricted')),
  add column grace_ends_at timestamptz,
  add column plan_changed_at timestamptz;

create table account_flags (
  account_id text not null references accounts (id) on delete cascade,
  flag text not null check (flag in ('suspended')),
  reason text not null,
  created_at timestamptz not null default now(),
  primary key (account_id, flag)
);

create table app_flags (
  app_id text not null references apps (id) on delete cascade,
  flag text not null check (flag in ('suspended', 'takedown')),
  reason text not null,
  created_at timestamptz not null default now(),
  primary key (app_id, flag)
);

-- Monthly totals per account (UTC month starting period_start), added to by every node's flush.
create table account_usage (
  account_id text not null references accounts (id) on delete cascade,
  period_start date not null,
  metric text not null check (metric ~ '^[a-z][a-z0-9_.]{0,63}$'),
  value bigint not null default 0 check (value >= 0),
  primary key (account_id, period_start, metric)
);

-- Alias routes of an app. Statuses: pending_dns, active, disabled_downgrade (and more with domains).
create table app_routes (
  id text primary key,
  app_id text not null references apps (id) on delete cascade,
  account_id text not null references accounts (id) on delete cascade,
  route_type text not null check (route_type in ('slug', 'custom_domain')),
  hostname text not null,
  status text not null,
  disabled_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index app_routes_hostname_key on app_routes (hostname);
create index app_routes_account_idx on app_routes (account_id, route_type, created_at);
create index app_routes_app_idx on app_routes (app_id);
