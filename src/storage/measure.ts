/**
 * What an account stores through its apps, the `storage.bytes` usage metric: its live data rows,
 * each counted as its JSON text (the size a row's 1 MiB limit and a list page's budget use), and
 * its live app files, each counted at its size. Releases are not counted (their file count and
 * size are limited per publish), nor what is deleted.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

export const STORAGE_METRIC = 'storage.bytes';

export type Measured = { bytes: number; planKey: string | undefined };

/** The account's stored bytes now, and its plan key (undefined: no such account). */
export async function measureStorage(db: Executor, accountId: string): Promise<Measured> {
  const { rows } = await sql<{ rows: string; files: string; plan_key: string | null }>`
    select
      (select coalesce(sum(octet_length(r.data::text)), 0) from app_rows r
        where r.app_id in (select id from apps where account_id = ${accountId}) and r.deleted_at is null) as rows,
      (select coalesce(sum(f.size), 0) from app_files f
        where f.app_id in (select id from apps where account_id = ${accountId}) and f.deleted_at is null) as files,
      (select plan_key from accounts where id = ${accountId}) as plan_key`.execute(db);
  const r = rows[0]!;
  return { bytes: Number(r.rows) + Number(r.files), planKey: r.plan_key ?? undefined };
}
