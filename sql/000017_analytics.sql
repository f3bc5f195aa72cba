-- App analytics: daily aggregates only (docs/decisions.md "Analytics"). No IP, user agent or visitor id is stored.
create table analytics_traffic (
  app_id text not null references apps (id) on delete cascade,
  day date not null,
  route_kind text not null check (route_kind in ('canonical', 'slug', 'custom_domain')),
  target text not null check (target in ('static', 'server', 'not_found')),
  status_bucket text not null check (status_bucket in ('2xx', '3xx', '4xx', '5xx')),
  bot boolean not null,
  requests bigint not null check (requests >= 0),
  primary key (app_id, day, route_kind, target, status_bucket, bot)
);
create index analytics_traffic_day_idx on analytics_traffic (day);

create table analytics_paths (
  app_id text not null references apps (id) on delete cascade,
  day date not null,
  path text not null,
  requests bigint not null check (requests >= 0),
  primary key (app_id, day, path)
);
create index analytics_paths_day_idx on analytics_paths (day);

create table analytics_referrers (
  app_id text not null references apps (id) on delete cascade,
  day date not null,
  domain text not null,
  requests bigint not null check (requests >= 0),
  primary key (app_id, day, domain)
);
create index analytics_referrers_day_idx on analytics_referrers (day);

-- Jobs and webhooks by final status, counted from the event log as events are written (one place, in the same transaction).
create function app_events_count() returns trigger language plpgsql as $$
declare counted text;
begin
  counted := case new.type
    when 'job.succeeded' then 'jobs.succeeded'
    when 'job.retry' then 'jobs.retry'
    when 'job.failed' then 'jobs.failed'
    when 'job.blocked' then 'jobs.blocked'
    when 'webhook.received' then 'webhooks.received'
    when 'webhook.delivered' then 'webhooks.delivered'
    when 'webhook.rejected' then 'webhooks.rejected'
    when 'webhook.delivery_failed' then 'webhooks.delivery_failed'
    when 'webhook.handler_missing' then 'webhooks.delivery_failed'
  end;
  if counted is not null then
    insert into usage_counters (app_id, day, metric, value)
    values (new.app_id, (new.created_at at time zone 'utc')::date, counted, 1)
    on conflict (app_id, day, metric) do update set value = usage_counters.value + 1;
  end if;
  return null;
end $$;
create trigger app_events_count after insert on app_events
  for each row when (new.type like 'job.%' or new.type like 'webhook.%') execute function app_events_count();

-- App users created and sessions started, per app and day.
create function count_insert() returns trigger language plpgsql as $$
begin
  insert into usage_counters (app_id, day, metric, value)
  values (new.app_id, (now() at time zone 'utc')::date, tg_argv[0], 1)
  on conflict (app_id, day, metric) do update set value = usage_counters.value + 1;
  return null;
end $$;
create trigger app_users_count after insert on app_users for each row execute function count_insert('app_users.signups');
create trigger app_sessions_count after insert on app_sessions for each row execute function count_insert('app_users.sessions');
