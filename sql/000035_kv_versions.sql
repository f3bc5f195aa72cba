-- Deno KV's versionstamps: every write of a KV entry takes the next number of one sequence, so an
-- entry's version only grows and an atomic commit's check compares it. Workers KV ignores it.
alter table kv_entries add column version bigint not null default 0;
create sequence kv_versions;
