-- A release published as a preview: stored without moving the live pointer and served at its own
-- preview origin to those holding a grant (src/releases/previews.ts) until it is made live.
alter table releases add column preview boolean not null default false;
