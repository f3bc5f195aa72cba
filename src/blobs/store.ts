import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/**
 * Content-addressed byte storage, deduplicated per account. Postgres in v0; an S3-compatible
 * store can implement the same interface (put is idempotent, get returns undefined when absent).
 */
export type BlobStore = {
  /** Stores each blob unless the account already has it; returns how many were new. */
  putMany(db: Executor, accountId: string, blobs: { sha256: Buffer; bytes: Buffer }[]): Promise<number>;
  get(db: Executor, accountId: string, sha256: Buffer): Promise<Buffer | undefined>;
};

export const postgresBlobStore: BlobStore = {
  async putMany(db, accountId, blobs) {
    const unique = new Map<string, { sha256: Buffer; bytes: Buffer }>();
    for (const b of blobs) unique.set(b.sha256.toString('hex'), b);
    if (!unique.size) return 0;
    // Skip the bytes we already hold: an unchanged republish sends no data to Postgres.
    const hashes = [...unique.values()].map((b) => b.sha256);
    const existing = await db
      .selectFrom('blobs')
      .select('sha256')
      .where('account_id', '=', accountId)
      .where('sha256', '=', sql<Buffer>`any(${hashes}::bytea[])`)
      .execute();
    for (const row of existing) unique.delete(row.sha256.toString('hex'));
    let added = 0;
    // Batches keep each statement's parameters well under Postgres limits and memory modest.
    let batch: { account_id: string; sha256: Buffer; size: number; data: Buffer }[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (!batch.length) return;
      const res = await db.insertInto('blobs').values(batch).onConflict((oc) => oc.doNothing()).executeTakeFirst();
      added += Number(res.numInsertedOrUpdatedRows ?? 0);
      batch = [];
      batchBytes = 0;
    };
    for (const b of unique.values()) {
      batch.push({ account_id: accountId, sha256: b.sha256, size: b.bytes.length, data: b.bytes });
      batchBytes += b.bytes.length;
      if (batch.length >= 200 || batchBytes >= 16 * 1024 * 1024) await flush();
    }
    await flush();
    return added;
  },
  async get(db, accountId, sha256) {
    const row = await db.selectFrom('blobs').select('data').where('account_id', '=', accountId).where('sha256', '=', sha256).executeTakeFirst();
    return row?.data;
  },
};
