-- Stripe billing: the account's customer link and the subscription as last read from Stripe, the
-- provider's event ids (recorded with their effect, so a replay has none), and a history of what
-- each applied event changed.
create table account_billing (
  account_id text primary key references accounts (id) on delete cascade,
  stripe_customer_id text not null,
  -- the subscription that decides the plan, as Stripe last reported it (null: none)
  subscription jsonb,
  -- a price Stripe reports that no plan is mapped to (kept for the account's compatibility warnings)
  unknown_price_id text,
  synced_at timestamptz
);
create unique index account_billing_customer_key on account_billing (stripe_customer_id);

create table stripe_events (
  id text primary key,
  type text not null,
  account_id text references accounts (id) on delete set null,
  received_at timestamptz not null default now()
);

create table billing_history (
  id bigserial primary key,
  account_id text not null references accounts (id) on delete cascade,
  source text not null,
  stripe_event_id text,
  from_plan_key text not null,
  to_plan_key text not null,
  from_state text not null,
  to_state text not null,
  created_at timestamptz not null default now()
);
create index billing_history_account_idx on billing_history (account_id, created_at);

