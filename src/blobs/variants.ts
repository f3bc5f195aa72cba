/**
 * Compressed variants at publish: which files of a bundle need them (compressible, and not already
 * compressed for this account: an identical republish compresses nothing), making them off the
 * main thread, and storing them beside the originals (the bytes in `blobs`, the link in
 * `blob_variants`) in the publish transaction.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { compressible, compressVariants, type Variant } from './compress.ts';
import type { BlobStore } from './store.ts';

export type PreparedVariants = { sha256: Buffer; variants: Variant[] }[];

/** At most this many files are compressed at once (libuv's thread pool has 4 threads by default). */
const PARALLEL = 4;

export async function prepareVariants(
  db: Executor,
  accountId: string,
  files: { content_type: string; sha256: Buffer; bytes: Buffer }[],
): Promise<PreparedVariants> {
  const wanted = new Map<string, { sha256: Buffer; bytes: Buffer }>();
  for (const f of files)
    if (compressible(f.content_type, f.bytes.length)) wanted.set(f.sha256.toString('hex'), f);
  if (!wanted.size) return [];
  const done = await db
    .selectFrom('blob_variants')
    .select('sha256')
    .distinct()
    .where('account_id', '=', accountId)
    .where('sha256', '=', sql<Buffer>`any(${[...wanted.values()].map((f) => f.sha256)}::bytea[])`)
    .execute();
  for (const row of done) wanted.delete(row.sha256.toString('hex'));
  const queue = [...wanted.values()];
  const out: PreparedVariants = [];
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift())
      out.push({ sha256: f.sha256, variants: await compressVariants(f.bytes) });
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
  return out;
}

export async function saveVariants(
  db: Executor,
  store: BlobStore,
  accountId: string,
  prepared: PreparedVariants,
): Promise<void> {
  if (!prepared.length) return;
  const blobs = prepared.flatMap((p) =>
    p.variants.flatMap((v) => (v.bytes ? [{ sha256: v.sha256, bytes: v.bytes }] : [])),
  );
  await store.putMany(db, accountId, blobs);
  const rows = prepared.flatMap((p) =>
    p.variants.map((v) => ({
      account_id: accountId,
      sha256: p.sha256,
      encoding: v.encoding,
      variant_sha256: v.sha256,
      size: v.bytes?.length ?? null,
    })),
  );
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('blob_variants')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}
