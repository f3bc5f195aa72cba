-- SQLite databases (D1 databases, Durable Objects' storage) kept in Postgres: each database's file
-- as fixed-size chunks, the latest image of each, written in one transaction per commit; and the
-- lease that lets exactly one node open it (docs/decisions/sql.md).
create table sql_databases (
  id text primary key,
  -- not a foreign key: a first publish applies its migrations before its app row exists
  app_id text,
  kind text not null,
  name text not null,
  size_bytes bigint not null default 0,
  -- commits so far: a node that loaded version n and sees n again has nothing to reload
  version bigint not null default 0,
  lease_node text,
  -- raised by every acquisition: a commit carries the epoch it was made under, so a holder whose
  -- lease was taken over can never write again (the fencing token)
  lease_epoch bigint not null default 0,
  lease_expires_at timestamptz,
  created_at timestamptz not null default now()
);
create index sql_databases_app on sql_databases (app_id);

create table sql_chunks (
  database_id text not null references sql_databases (id) on delete cascade,
  chunk_no integer not null,
  data bytea not null,
  primary key (database_id, chunk_no)
);
