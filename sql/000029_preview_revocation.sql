-- Preview links issued before this moment no longer open any of the app's previews
-- (POST /v0/apps/<app_id>/preview-links/revoke); null: every unexpired link does.
alter table apps add column previews_revoked_at timestamptz;

-- other nodes drop their cached cut-off with the app's other serving state (000018_change_notify.sql)
create trigger apps_previews_notify after update of previews_revoked_at on apps
  for each row when (old.previews_revoked_at is distinct from new.previews_revoked_at)
  execute function notify_change('app', 'id');
