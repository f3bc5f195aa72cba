-- The data browser sorts a collection by a field an index starts with: one range scan in the order of
-- that field's value as jsonb (numbers as numbers), then creation (src/data/sorted.ts).
create index app_row_index_entries_sort_idx
  on app_row_index_entries (app_id, collection, index_name, ((key::jsonb -> 0)), created_at, row_id);
