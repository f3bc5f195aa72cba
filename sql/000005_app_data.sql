-- App data collections: every app's rows in one shared table, scoped by app_id (no table per app).
create table app_rows (
  app_id text not null references apps (id),
  collection text not null,
  id text not null,
  data jsonb not null,
  owner_user_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  primary key (app_id, collection, id)
);
-- Stable list order (created_at, id) within one app's collection.
create index app_rows_order_idx on app_rows (app_id, collection, created_at, id) where deleted_at is null;
-- Equality filters: containment on the row with its app and collection folded in, so one
-- GIN lookup is selective per app ($-keys cannot clash with field names, which start with a letter).
-- jsonb_build_object is only STABLE in general (it takes "any"); over text arguments it is
-- deterministic, which this wrapper declares so it can be indexed.
create function app_row_doc(app_id text, collection text, data jsonb) returns jsonb
  language sql immutable parallel safe
  as $$ select jsonb_build_object('$a', app_id, '$c', collection) || data $$;
create index app_rows_match_idx on app_rows using gin (app_row_doc(app_id, collection, data) jsonb_path_ops) where deleted_at is null;

-- Unique indexes declared by apps: one row per (index, key), claimed in the row's transaction.
create table app_row_uniques (
  app_id text not null,
  collection text not null,
  index_name text not null,
  key text not null,
  row_id text not null,
  primary key (app_id, collection, index_name, key)
);
create index app_row_uniques_row_idx on app_row_uniques (app_id, collection, row_id);

-- Entries of the indexes apps declare (unique or not): a list whose `where` covers an index is
-- one ordered range scan of this primary key, in the list order (created_at, row_id).
create table app_row_index_entries (
  app_id text not null,
  collection text not null,
  index_name text not null,
  key text not null,
  created_at timestamptz not null,
  row_id text not null,
  primary key (app_id, collection, index_name, key, created_at, row_id)
);
create index app_row_index_entries_row_idx on app_row_index_entries (app_id, collection, row_id);
