/**
 * `npm run admin -- migrate-blobs --to s3|postgres`: moves existing blobs between Postgres and the
 * object store while the service runs. Each blob is copied first, then its row is switched in one
 * statement (reads follow the row, so every read finds the bytes before and after); moving to S3
 * clears the row's bytes, moving back deletes the object after the row holds the bytes again.
 * Idempotent and resumable: run it again after an interruption.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { bucketIdentity, liveNodes } from '../nodes/heartbeat.ts';
import { objectKey } from './s3.ts';
import { objectStoreOf } from './store.ts';

const PAGE = 200;
const PARALLEL = 4;

export async function migrateBlobs(
  deps: Deps,
  to: 's3' | 'postgres',
  onProgress: (moved: number, bytes: number) => void = () => {},
): Promise<{ moved: number; bytes: number }> {
  const s3 = deps.config.blobs.s3;
  if (!s3) throw new Error('Set PLATFORM_S3_BUCKET (and the other PLATFORM_S3_* settings) first.');
  if (to === 's3') await refuseWhileBlindNodes(deps, bucketIdentity(s3)!);
  const objects = objectStoreOf(s3);
  const from = to === 's3' ? 'postgres' : 's3';
  let moved = 0;
  let bytes = 0;
  for (;;) {
    const page = await deps.db
      .selectFrom('blobs')
      .select(['account_id', 'sha256', 'size'])
      .where('stored_in', '=', from)
      .limit(PAGE)
      .execute();
    if (!page.length) break;
    const queue = [...page];
    const work = async () => {
      for (let b = queue.shift(); b; b = queue.shift()) {
        const key = objectKey(s3, b.account_id, b.sha256);
        if (to === 's3') {
          const row = await deps.db
            .selectFrom('blobs')
            .select('data')
            .where('account_id', '=', b.account_id)
            .where('sha256', '=', b.sha256)
            .where('stored_in', '=', 'postgres')
            .executeTakeFirst();
          if (!row?.data) continue; // moved or deleted meanwhile
          await objects.put(key, row.data);
          await deps.db
            .updateTable('blobs')
            .set({ data: null, stored_in: 's3' })
            .where('account_id', '=', b.account_id)
            .where('sha256', '=', b.sha256)
            .where('stored_in', '=', 'postgres')
            .execute();
        } else {
          const data = await objects.get(key);
          if (!data)
            throw new Error(`object ${key} is missing: its blob row says it is in the bucket`);
          const r = await deps.db
            .updateTable('blobs')
            .set({ data, stored_in: 'postgres' })
            .where('account_id', '=', b.account_id)
            .where('sha256', '=', b.sha256)
            .where('stored_in', '=', 's3')
            .executeTakeFirst();
          if (Number(r.numUpdatedRows)) await objects.delete([key]);
        }
        moved++;
        bytes += Number(b.size);
        onProgress(moved, bytes);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, work));
  }
  await sql`analyze blobs`.execute(deps.db).catch(() => {});
  return { moved, bytes };
}

/**
 * A node serving without this bucket (no PLATFORM_S3_* settings, or another bucket) would answer
 * 500 for every blob moved: refuse, naming them, until each reads the bucket or stops. Moving back
 * to Postgres needs no check: every node reads rows.
 */
async function refuseWhileBlindNodes(deps: Deps, bucket: string): Promise<void> {
  const blind = (await liveNodes(deps.db)).filter((n) => n.blob_bucket !== bucket);
  if (!blind.length) return;
  const names = blind.map(
    (n) =>
      `${n.host} pid ${n.pid} (${n.role}, ${n.blob_bucket ? `reads ${n.blob_bucket}` : 'no bucket'})`,
  );
  throw new ApiError(
    'conflict',
    `Not moving anything: ${blind.length === 1 ? 'a running node cannot' : `${blind.length} running nodes cannot`} read the bucket ${bucket}, and would answer 500 for every file moved: ${names.join('; ')}. Give ${blind.length === 1 ? 'it' : 'them'} the same PLATFORM_S3_* settings and restart, or stop ${blind.length === 1 ? 'it' : 'them'}, then run this again.`,
    { nodes: blind.map((n) => ({ node_id: n.node_id, host: n.host, pid: n.pid, role: n.role })) },
  );
}
