-- Operators: the people who run this server. A user named here sees the console's Operator section
-- and the `/v0/operator` routes; `admin grant-operator` names one, and on a fresh install the first
-- user becomes one (src/operators/first.ts). `granted_by` is who named them: a user id, or a label
-- such as 'admin command' or 'first user'.
create table operators (
  user_id text primary key references users (id) on delete cascade,
  granted_by text not null,
  granted_at timestamptz not null default now()
);

-- Every operator action, from the console, the API or `npm run admin`, with who took it. `actor` is
-- the operator's user id (null for the admin command, which runs as whoever can reach the database:
-- `actor_label` says which OS user on which host).
create table operator_actions (
  id text primary key,
  seq bigint generated always as identity unique,
  at timestamptz not null default now(),
  actor_user_id text references users (id) on delete set null,
  actor_label text not null,
  action text not null,
  account_id text,
  app_id text,
  detail jsonb not null default '{}'
);
