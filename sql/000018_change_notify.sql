-- What other nodes cache, announced from the transaction that changes it (src/changes/feed.ts):
-- an app's live release or tombstone, its secrets and flags; an account's plan, billing access and flags.
create function notify_change() returns trigger language plpgsql as $$
declare row record;
begin
  if tg_op = 'DELETE' then row := old; else row := new; end if;
  perform pg_notify('platform_changes', json_build_object('kind', tg_argv[0], 'id', to_jsonb(row) ->> tg_argv[1])::text);
  return null;
end $$;

create trigger apps_notify after update of live_release_id, deleted_at on apps
  for each row when (old.live_release_id is distinct from new.live_release_id or old.deleted_at is distinct from new.deleted_at)
  execute function notify_change('app', 'id');
create trigger app_flags_notify after insert or update or delete on app_flags for each row execute function notify_change('app', 'app_id');
create trigger app_secrets_notify after insert or update or delete on app_secrets for each row execute function notify_change('secrets', 'app_id');
create trigger accounts_notify after update of plan_key, billing_access_state, grace_ends_at on accounts
  for each row execute function notify_change('account', 'id');
create trigger account_flags_notify after insert or update or delete on account_flags for each row execute function notify_change('account', 'account_id');
