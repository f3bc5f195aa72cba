/**
 * R2's multipart uploads: an upload holds its parts (each a blob of the account) until it is
 * completed (the parts, in the order given, become the pieces of one object whose etag is R2's: the
 * MD5 of the parts' MD5s and `-<count>`) or aborted. Every part but the last must be at least 5 MiB.
 */
import { createHash, randomBytes } from 'node:crypto';
import { blobStore } from '../blobs/store.ts';
import type { Deps } from '../deps.ts';
import { storageQuota } from '../storage/quota.ts';
import {
  checkCustomMetadata,
  objectRow,
  type R2Meta,
  R2_LIMITS,
  type R2Target,
  r2Error,
  r2Key,
  writeObject,
} from './r2.ts';
import { holdBlobs } from './r2-bytes.ts';

const noSuchUpload = (op: string) =>
  r2Error(op, 'The specified multipart upload does not exist.', 10024);

export async function r2CreateUpload(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  options: { httpMetadata?: Record<string, string>; customMetadata?: Record<string, string> },
): Promise<{ uploadId: string }> {
  const key = r2Key('createMultipartUpload', keyArg);
  const custom = options.customMetadata ?? {};
  checkCustomMetadata('createMultipartUpload', custom);
  const id = randomBytes(24).toString('base64url');
  await deps.db
    .insertInto('r2_uploads')
    .values({
      id,
      app_id: target.appId,
      bucket,
      key,
      http_metadata: JSON.stringify(options.httpMetadata ?? {}),
      custom_metadata: JSON.stringify(custom),
    })
    .execute();
  return { uploadId: id };
}

async function uploadOf(
  deps: Deps,
  target: R2Target,
  bucket: string,
  key: Buffer,
  id: unknown,
  op: string,
) {
  if (typeof id !== 'string') throw noSuchUpload(op);
  const up = await deps.db
    .selectFrom('r2_uploads')
    .selectAll()
    .where('id', '=', id)
    .where('app_id', '=', target.appId)
    .where('bucket', '=', bucket)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!up) throw noSuchUpload(op);
  return up;
}

export async function r2UploadPart(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  uploadId: unknown,
  partNumber: unknown,
  bytes: Buffer,
): Promise<{ partNumber: number; etag: string }> {
  const key = r2Key('uploadPart', keyArg);
  const up = await uploadOf(deps, target, bucket, key, uploadId, 'uploadPart');
  const n = Number(partNumber);
  if (!Number.isInteger(n) || n < 1 || n > R2_LIMITS.maxParts)
    throw r2Error('uploadPart', 'Part number must be between 1 and 10000 (inclusive).', 10029);
  const sha256 = createHash('sha256').update(bytes).digest();
  const etag = createHash('md5').update(bytes).digest('hex');
  await storageQuota(deps).check(target.accountId, bytes.length);
  await deps.db.transaction().execute(async (trx) => {
    await blobStore(deps.config).putMany(trx, target.accountId, [{ sha256, bytes }]);
    const row = { sha256, size: bytes.length, etag };
    await trx
      .insertInto('r2_upload_parts')
      .values({ upload_id: up.id, part_number: n, ...row })
      .onConflict((oc) => oc.columns(['upload_id', 'part_number']).doUpdateSet(row))
      .execute();
  });
  return { partNumber: n, etag };
}

export async function r2CompleteUpload(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  uploadId: unknown,
  parts: unknown,
): Promise<R2Meta> {
  const op = 'completeMultipartUpload';
  const key = r2Key(op, keyArg);
  const up = await uploadOf(deps, target, bucket, key, uploadId, op);
  const asked = (Array.isArray(parts) ? parts : []) as { partNumber?: unknown; etag?: unknown }[];
  const stored = await deps.db
    .selectFrom('r2_upload_parts')
    .selectAll()
    .where('upload_id', '=', up.id)
    .execute();
  const byNumber = new Map(stored.map((p) => [p.part_number, p]));
  const chosen = asked.map((a) => {
    const p = byNumber.get(Number(a.partNumber));
    if (!p || p.etag !== a.etag)
      throw r2Error(op, 'One or more of the specified parts could not be found.', 10025);
    return p;
  });
  if (!chosen.length)
    throw r2Error(op, 'One or more of the specified parts could not be found.', 10025);
  if (chosen.slice(0, -1).some((p) => Number(p.size) < R2_LIMITS.minPartBytes))
    throw r2Error(
      op,
      'Your proposed upload is smaller than the minimum allowed object size.',
      10011,
    );
  const pieces = chosen.map((p) => ({ sha256: p.sha256, size: Number(p.size) }));
  const size = pieces.reduce((n, p) => n + p.size, 0);
  const etag = `${createHash('md5')
    .update(Buffer.concat(chosen.map((p) => Buffer.from(p.etag, 'hex'))))
    .digest('hex')}-${chosen.length}`;
  const done = await deps.db.transaction().execute(async (trx) => {
    const still = await trx
      .deleteFrom('r2_uploads')
      .where('id', '=', up.id)
      .returning('id')
      .executeTakeFirst();
    if (!still) throw noSuchUpload(op);
    const existing = await objectRow(trx, target, bucket, key, true);
    // the parts become the object's pieces: their bytes are never joined
    await holdBlobs(trx, target.accountId, pieces);
    const meta = await writeObject(trx, target, bucket, key, {
      ...(pieces.length === 1 ? { sha256: pieces[0]!.sha256 } : { pieces }),
      size,
      etag,
      checksums: {},
      httpMetadata: up.http_metadata ?? {},
      customMetadata: up.custom_metadata ?? {},
    });
    return { meta, freed: existing ? Number(existing.size) : 0 };
  });
  // the parts' bytes were counted as they came; the object replaces them
  const partBytes = stored.reduce((n, p) => n + Number(p.size), 0);
  storageQuota(deps).added(target.accountId, size - done.freed - partBytes);
  return done.meta;
}

export async function r2AbortUpload(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  uploadId: unknown,
): Promise<void> {
  const key = r2Key('abortMultipartUpload', keyArg);
  const up = await uploadOf(deps, target, bucket, key, uploadId, 'abortMultipartUpload');
  await deps.db.deleteFrom('r2_uploads').where('id', '=', up.id).execute();
}
