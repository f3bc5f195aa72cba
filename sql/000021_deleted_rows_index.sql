-- Deleted data rows and file records are purged some days after deletion (worker/tasks/retention.ts,
-- pruneDeletedData); these partial indexes let the hourly purge find them without reading the live rows.
create index app_rows_deleted_idx on app_rows (deleted_at) where deleted_at is not null;
create index app_files_deleted_idx on app_files (deleted_at) where deleted_at is not null;
