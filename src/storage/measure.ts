/**
 * What an account stores through its apps, the `storage.bytes` usage metric: its live data rows,
 * each counted as its JSON text (the size a row's 1 MiB limit and a list page's budget use), and
 * its live app files, each counted at its size. Releases are not counted (their file count and
 * size are limited per publish), nor what is deleted.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { ResourceState } from '../manifest/resources.ts';

export const STORAGE_METRIC = 'storage.bytes';

export type Measured = { bytes: number; planKey: string | undefined };

/** The account's stored bytes now, and its plan key (undefined: no such account). */
export async function measureStorage(db: Executor, accountId: string): Promise<Measured> {
  const { rows } = await sql<{
    rows: string;
    files: string;
    kv: string;
    plan_key: string | null;
  }>`
    select
      (select coalesce(sum(octet_length(r.data::text)), 0) from app_rows r
        where r.app_id in (select id from apps where account_id = ${accountId}) and r.deleted_at is null) as rows,
      (select coalesce(sum(f.size), 0) from app_files f
        where f.app_id in (select id from apps where account_id = ${accountId}) and f.deleted_at is null) as files,
      (select coalesce(sum(k.size + octet_length(k.key)), 0) from kv_entries k
        where k.app_id in (select id from apps where account_id = ${accountId}))
      + (select coalesce(sum(o.size), 0) from r2_objects o
        where o.app_id in (select id from apps where account_id = ${accountId}))
      + (select coalesce(sum(p.size), 0) from r2_upload_parts p join r2_uploads u on u.id = p.upload_id
        where u.app_id in (select id from apps where account_id = ${accountId}))
      + (select coalesce(sum(d.size_bytes), 0) from sql_databases d
        where d.app_id in (select id from apps where account_id = ${accountId})) as kv,
      (select plan_key from accounts where id = ${accountId}) as plan_key`.execute(db);
  const r = rows[0]!;
  return {
    bytes: Number(r.rows) + Number(r.files) + Number(r.kv),
    planKey: r.plan_key ?? undefined,
  };
}

/** One collection's or store's share of an app's storage: rows (data) or files (files), and their bytes. */
export type Share = { count: number; bytes: number };
export type AppStorage = {
  bytes: number;
  collections: Map<string, Share>;
  stores: Map<string, Share>;
  /** KV namespaces by binding name: keys, and bytes of keys and values */
  kv: Map<string, Share>;
  /** R2 buckets by name: objects and their bytes */
  r2: Map<string, Share>;
};

/**
 * What one app stores, measured as measureStorage() measures an account, split by collection and
 * by file store. Collections and stores the live release no longer declares are in the maps too
 * (their data is kept and still counts).
 */
export async function measureApp(db: Executor, appId: string): Promise<AppStorage> {
  const { rows } = await sql<{
    kind: 'data' | 'files' | 'kv' | 'r2';
    name: string;
    count: string;
    bytes: string;
  }>`
    select 'data' as kind, collection as name, count(*) as count, coalesce(sum(octet_length(data::text)), 0) as bytes
      from app_rows where app_id = ${appId} and deleted_at is null group by collection
    union all
    select 'files', store, count(*), coalesce(sum(size), 0)
      from app_files where app_id = ${appId} and deleted_at is null group by store
    union all
    select 'kv', namespace, count(*), coalesce(sum(size + octet_length(key)), 0)
      from kv_entries where app_id = ${appId} group by namespace
    union all
    select 'r2', bucket, count(*), coalesce(sum(size), 0)
      from r2_objects where app_id = ${appId} group by bucket`.execute(db);
  const out: AppStorage = {
    bytes: 0,
    collections: new Map(),
    stores: new Map(),
    kv: new Map(),
    r2: new Map(),
  };
  for (const r of rows) {
    const share = { count: Number(r.count), bytes: Number(r.bytes) };
    ({ data: out.collections, files: out.stores, kv: out.kv, r2: out.r2 })[r.kind].set(
      r.name,
      share,
    );
    out.bytes += share.bytes;
  }
  return out;
}

/** The resources view's entries for collections and stores, each with what it holds (none yet: zero). */
export function withUsage(
  resources: ResourceState[],
  stored: AppStorage,
): (ResourceState & {
  usage?: { rows: number; bytes: number } | { files: number; bytes: number };
})[] {
  const none: Share = { count: 0, bytes: 0 };
  return resources.map((r) => {
    if (r.resource_type === 'data') {
      const s = stored.collections.get(r.resource_name) ?? none;
      return { ...r, usage: { rows: s.count, bytes: s.bytes } };
    }
    if (r.resource_type === 'files') {
      const s = stored.stores.get(r.resource_name) ?? none;
      return { ...r, usage: { files: s.count, bytes: s.bytes } };
    }
    return r;
  });
}
