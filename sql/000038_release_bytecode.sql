-- Each release's server modules compiled to the engine's bytecode when it is published (made by the
-- platform from the release's source, never taken from a client), brotli-compressed, keyed by the
-- engine build that made it: a node running another build compiles the source instead.
create table release_bytecode (
  release_id text not null references releases (id) on delete cascade,
  engine text not null,
  pack bytea not null,
  bytes integer not null,
  created_at timestamptz not null default now(),
  primary key (release_id, engine)
);
