-- App users an app's team has disabled: they cannot sign in and their sessions are revoked; re-enabling
-- clears it (src/app-auth/admin.ts).
alter table app_users add column disabled_at timestamptz;
