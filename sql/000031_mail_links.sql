-- A queued message names the link it carries by the row its token belongs to; the sender makes the token
-- when it sends (src/mail/links.ts), so no raw token waits in the job queue, a backup or the dev outbox.
-- Rows made before this migration have no id: their mail was queued with its link, as before.
alter table email_auth_tokens add column id text unique;
alter table app_email_verifications add column id text unique;

-- The development outbox keeps what was sent without the link itself (the terminal shows it once).
update dev_outbox set body = regexp_replace(body, '#token=[A-Za-z0-9_-]{43}', '#token=(not stored)', 'g');

-- Mail jobs an older version queued carry their link. Those that failed for good will never be sent.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    delete from graphile_worker._private_jobs j using graphile_worker._private_tasks t
    where t.id = j.task_id and t.identifier = 'platform_email' and j.attempts >= j.max_attempts;
  end if;
end $$;
