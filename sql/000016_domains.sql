-- Slugs and custom domains (docs/decisions.md "Routes and domains").
alter table app_routes
  add column slug text,
  add column verification_token text,
  add column verified_at timestamptz,
  add column last_check jsonb,
  add column last_checked_at timestamptz,
  add column next_check_at timestamptz,
  add column check_attempts integer not null default 0,
  add column provider jsonb,
  add column deleted_at timestamptz;

-- A removed alias stays as a tombstone (its host answers 410 route_disabled) and frees its name.
drop index app_routes_hostname_key;
create unique index app_routes_hostname_key on app_routes (hostname) where status <> 'deleted';
create index app_routes_recheck_idx on app_routes (next_check_at) where status = 'pending_dns';

-- Every change to a route tells every node, from the transaction that makes it (delivered at commit).
create function app_routes_notify() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    perform pg_notify('platform_changes', json_build_object('kind', 'route', 'hostname', old.hostname)::text);
  end if;
  if tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.hostname <> old.hostname) then
    perform pg_notify('platform_changes', json_build_object('kind', 'route', 'hostname', new.hostname)::text);
  end if;
  return null;
end $$;
create trigger app_routes_notify after insert or update or delete on app_routes
  for each row execute function app_routes_notify();
