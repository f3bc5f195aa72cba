/**
 * Blob retention: bytes no release, compressed variant, app file, KV value or R2 object (or piece)
 * needs are deleted, from the `blobs` rows and from the object store. A blob used within BLOB_GRACE_MS is kept whatever the
 * references say: a publish or upload in flight marks the blobs it reuses (and holds their row
 * locks until it commits), so it never loses one. Objects in the bucket with no row at all (an
 * upload whose transaction rolled back) are swept after the same grace.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { blobPrefix, objectKey } from './s3.ts';
import { objectStoreOf } from './store.ts';

export const BLOB_GRACE_MS = 60 * 60 * 1000;

/** Deletes the account's unneeded blobs; returns how many. */
export async function pruneBlobs(
  deps: Deps,
  accountId: string,
  now = new Date(),
  graceMs = BLOB_GRACE_MS,
): Promise<number> {
  const referenced = sql`select f.sha256 from release_files f join releases r on r.id = f.release_id join apps a on a.id = r.app_id where a.account_id = ${accountId}`;
  await sql`delete from blob_variants v where v.account_id = ${accountId} and v.sha256 not in (${referenced})`.execute(
    deps.db,
  );
  const { rows } = await sql<{ sha256: Buffer; stored_in: 'postgres' | 's3' }>`
    delete from blobs b where b.account_id = ${accountId}
      and b.sha256 not in (${referenced})
      and not exists (select 1 from blob_variants v where v.account_id = b.account_id and v.variant_sha256 = b.sha256)
      and not exists (select 1 from app_files f join apps a on a.id = f.app_id where a.account_id = b.account_id and f.sha256 = b.sha256 and f.deleted_at is null)
      and not exists (select 1 from kv_entries k join apps a on a.id = k.app_id where a.account_id = b.account_id and k.sha256 = b.sha256)
      and not exists (select 1 from r2_objects o join apps a on a.id = o.app_id where a.account_id = b.account_id and o.sha256 = b.sha256)
      and not exists (select 1 from r2_objects o join apps a on a.id = o.app_id where a.account_id = b.account_id and o.pieces @> array[b.sha256])
      and not exists (select 1 from r2_upload_parts p join r2_uploads u on u.id = p.upload_id join apps a on a.id = u.app_id where a.account_id = b.account_id and p.sha256 = b.sha256)
      and b.last_used_at < ${now}::timestamptz - make_interval(secs => ${graceMs / 1000})
    returning b.sha256, b.stored_in`.execute(deps.db);
  const inBucket = rows.filter((r) => r.stored_in === 's3');
  const s3 = deps.config.blobs.s3;
  if (inBucket.length && s3) {
    // a failure here leaves objects without rows: the sweep deletes them later
    await objectStoreOf(s3)
      .delete(inBucket.map((r) => objectKey(s3, accountId, r.sha256)))
      .catch((err) =>
        deps.log.warn('could not delete blob objects; the sweep will', {
          account_id: accountId,
          objects: inBucket.length,
          error: String(err),
        }),
      );
  }
  return rows.length;
}

/** Deletes bucket objects that no `blobs` row names and that are older than the grace period. */
export async function sweepOrphanObjects(
  deps: Deps,
  now = new Date(),
  graceMs = BLOB_GRACE_MS,
): Promise<{ checked: number; deleted: number }> {
  const s3 = deps.config.blobs.s3;
  if (!s3) return { checked: 0, deleted: 0 };
  const objects = objectStoreOf(s3);
  const prefix = blobPrefix(s3);
  let checked = 0;
  let deleted = 0;
  for await (const page of objects.list(prefix)) {
    checked += page.length;
    const old = page.filter((o) => o.lastModified.getTime() < now.getTime() - graceMs);
    const named = old.flatMap((o) => {
      const [account, hex] = o.key.slice(prefix.length).split('/');
      return account && hex && /^[0-9a-f]{64}$/.test(hex) ? [{ key: o.key, account, hex }] : [];
    });
    if (!named.length) continue;
    const { rows } = await sql<{ account_id: string; hex: string }>`
      select b.account_id, encode(b.sha256, 'hex') as hex from blobs b
      join unnest(${named.map((n) => n.account)}::text[], ${named.map((n) => n.hex)}::text[]) as k(account_id, hex)
        on b.account_id = k.account_id and b.sha256 = decode(k.hex, 'hex')
      where b.stored_in = 's3'`.execute(deps.db);
    const kept = new Set(rows.map((r) => `${r.account_id}/${r.hex}`));
    const orphans = named.filter((n) => !kept.has(`${n.account}/${n.hex}`)).map((n) => n.key);
    if (orphans.length) {
      await objects.delete(orphans);
      deleted += orphans.length;
    }
  }
  return { checked, deleted };
}
