-- Per-app usage by UTC day: what plans, quotas and analytics read (outbound requests first; others follow).
create table usage_counters (
  app_id text not null references apps (id),
  day date not null,
  metric text not null check (metric ~ '^[a-z][a-z0-9_.]{0,63}$'),
  value bigint not null default 0 check (value >= 0),
  primary key (app_id, day, metric)
);
