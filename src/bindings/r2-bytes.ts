/**
 * An R2 object's bytes, never held whole: an object is one blob of the account or its pieces in
 * order (a streamed put, a completed multipart upload), and a read takes a range of them, piece by
 * piece (a ranged GET on S3, `substring` in Postgres). App code reads a large object in chunks
 * (`r2.read`, the guest's `body` stream) and writes a stream in chunks (`r2.putBegin`, `putChunk`,
 * `putEnd`: the hashes grow as the chunks arrive, each chunk is stored as it comes).
 */
import { createHash, type Hash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { blobStore } from '../blobs/store.ts';
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { storageQuota } from '../storage/quota.ts';
import {
  checkCustomMetadata,
  conditionsHold,
  objectRow,
  type Piece,
  piecesOf,
  type PutOptions,
  type R2Meta,
  type R2Target,
  r2Error,
  r2Key,
  verifyHash,
  writeObject,
} from './r2.ts';

/** At most this many bytes answer one read (the guest asks for 1 MiB). */
export const MAX_READ_BYTES = 8 * 1024 * 1024;

/** Bytes `offset` to `offset + length` of an object made of `pieces`. */
export async function readPieces(
  deps: Deps,
  accountId: string,
  pieces: Piece[],
  offset: number,
  length: number,
): Promise<Buffer> {
  const out: Buffer[] = [];
  let start = 0;
  const end = offset + length;
  for (const p of pieces) {
    const pieceEnd = start + p.size;
    if (pieceEnd > offset && start < end) {
      const from = Math.max(offset, start) - start;
      const to = Math.min(end, pieceEnd) - start;
      const got = await blobStore(deps.config).readRange(
        deps.db,
        accountId,
        p.sha256,
        from,
        to - from,
      );
      if (!got) throw new Error(`an R2 object's blob of account ${accountId} is missing`);
      out.push(got);
    }
    start = pieceEnd;
    if (start >= end) break;
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out);
}

/** A range of the object as a stream of chunks (the console's download): never read whole. */
export function streamPieces(
  deps: Deps,
  accountId: string,
  pieces: Piece[],
  offset: number,
  length: number,
  chunk = 1024 * 1024,
): ReadableStream<Uint8Array> {
  let at = offset;
  const end = offset + length;
  return new ReadableStream({
    async pull(c) {
      if (at >= end) return c.close();
      const n = Math.min(chunk, end - at);
      c.enqueue(new Uint8Array(await readPieces(deps, accountId, pieces, at, n)));
      at += n;
      if (at >= end) c.close();
    },
  });
}

/** `r2.read`: a chunk of the version of an object a get answered (a newer version is refused). */
export async function r2Read(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  version: unknown,
  offset: unknown,
  length: unknown,
): Promise<Buffer> {
  const key = r2Key('get', keyArg);
  const row = await objectRow(deps.db, target, bucket, key);
  if (!row || row.version !== version)
    throw r2Error('get', 'The object was replaced or deleted while its body was read.', 10007);
  const at = Number(offset);
  const n = Math.min(Number(length), MAX_READ_BYTES);
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(n) || at < 0 || n <= 0)
    throw new ApiError('invalid_request', 'r2.read takes an offset and a positive length.');
  const size = Number(row.size);
  if (at >= size) return Buffer.alloc(0);
  return readPieces(deps, target.accountId, piecesOf(row), at, Math.min(n, size - at));
}

// ---- streamed puts --------------------------------------------------------------------------

type Staged = {
  target: R2Target;
  bucket: string;
  key: Buffer;
  options: PutOptions;
  md5: Hash;
  sha256: Hash;
  asked?: Hash;
  pieces: Piece[];
  size: number;
  touched: number;
};

/** Puts in flight in this process, by an id only the calling sandbox holds. */
const staged = new Map<string, Staged>();
const STAGED_IDLE_MS = 15 * 60 * 1000;
const STAGED_PER_APP = 16;

const HASH_NAMES: Record<string, string> = {
  md5: 'md5',
  sha1: 'sha1',
  sha256: 'sha256',
  sha384: 'sha384',
  sha512: 'sha512',
};

function stagedOf(target: R2Target, id: unknown): Staged {
  const s = typeof id === 'string' ? staged.get(id) : undefined;
  if (!s || s.target.appId !== target.appId)
    throw new ApiError('not_found', 'No streamed put is in flight under that id.');
  s.touched = Date.now();
  return s;
}

export function r2PutBegin(
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  options: PutOptions,
): { id: string } {
  const key = r2Key('put', keyArg);
  checkCustomMetadata('put', options.customMetadata ?? {});
  const now = Date.now();
  let mine = 0;
  for (const [id, s] of staged) {
    if (now - s.touched > STAGED_IDLE_MS) staged.delete(id);
    else if (s.target.appId === target.appId) mine++;
  }
  if (mine >= STAGED_PER_APP)
    throw new ApiError('rate_limited', `At most ${STAGED_PER_APP} streamed puts at once.`);
  const id = randomBytes(18).toString('base64url');
  const algo = options.hash && HASH_NAMES[options.hash.field];
  staged.set(id, {
    target,
    bucket,
    key,
    options,
    md5: createHash('md5'),
    sha256: createHash('sha256'),
    ...(algo && algo !== 'md5' && algo !== 'sha256' ? { asked: createHash(algo) } : {}),
    pieces: [],
    size: 0,
    touched: now,
  });
  return { id };
}

/** One chunk, stored as its own blob as it arrives (counted against the plan before it is kept). */
export async function r2PutChunk(
  deps: Deps,
  target: R2Target,
  id: unknown,
  bytes: Buffer,
): Promise<{ size: number }> {
  const s = stagedOf(target, id);
  if (!bytes.length) return { size: s.size };
  await storageQuota(deps).check(target.accountId, s.size + bytes.length);
  const sha256 = createHash('sha256').update(bytes).digest();
  // committed on its own: until the object names it, retention's grace keeps it
  await blobStore(deps.config).putMany(deps.db, target.accountId, [{ sha256, bytes }]);
  s.md5.update(bytes);
  s.sha256.update(bytes);
  s.asked?.update(bytes);
  s.pieces.push({ sha256, size: bytes.length });
  s.size += bytes.length;
  return { size: s.size };
}

export async function r2PutEnd(deps: Deps, target: R2Target, id: unknown): Promise<R2Meta | null> {
  const s = stagedOf(target, id);
  staged.delete(id as string);
  const md5 = s.md5.digest('hex');
  const sha256Hex = s.sha256.digest('hex');
  const checksums: Record<string, string> = { md5 };
  if (s.options.hash) {
    const f = s.options.hash.field;
    const actual = f === 'md5' ? md5 : f === 'sha256' ? sha256Hex : s.asked?.digest('hex');
    if (actual !== undefined) checksums[f] = verifyHash(f, s.options.hash.hex, actual);
  }
  const result = await deps.db.transaction().execute(async (trx) => {
    const existing = await objectRow(trx, target, s.bucket, s.key, true);
    if (!conditionsHold(s.options.onlyIf, existing)) return null;
    if (!s.pieces.length) {
      const empty = { sha256: createHash('sha256').digest(), bytes: Buffer.alloc(0) };
      await blobStore(deps.config).putMany(trx, target.accountId, [empty]);
      s.pieces.push({ sha256: empty.sha256, size: 0 });
    } else await holdBlobs(trx, target.accountId, s.pieces);
    const meta = await writeObject(trx, target, s.bucket, s.key, {
      ...(s.pieces.length === 1 ? { sha256: s.pieces[0]!.sha256 } : { pieces: s.pieces }),
      size: s.size,
      etag: md5,
      checksums,
      httpMetadata: s.options.httpMetadata ?? {},
      customMetadata: s.options.customMetadata ?? {},
    });
    return { meta, freed: existing ? Number(existing.size) : 0 };
  });
  if (!result) return null;
  storageQuota(deps).added(target.accountId, s.size - result.freed);
  return result.meta;
}

/**
 * Marks the blobs an object is about to name as used, row-locked until the caller commits (a
 * retention run in between waits, then sees them named); refuses when one is gone.
 */
export async function holdBlobs(trx: Executor, accountId: string, pieces: Piece[]): Promise<void> {
  const unique = [...new Map(pieces.map((p) => [p.sha256.toString('hex'), p.sha256])).values()];
  const held = await trx
    .updateTable('blobs')
    .set({ last_used_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('sha256', '=', sql<Buffer>`any(${unique}::bytea[])`)
    .returning('sha256')
    .execute();
  if (held.length !== unique.length)
    throw new Error(`a piece of an R2 object of account ${accountId} is missing`);
}

/** `r2.putAbort`: the app's stream failed; its chunks are left to retention. */
export function r2PutAbort(target: R2Target, id: unknown): void {
  const s = typeof id === 'string' ? staged.get(id) : undefined;
  if (s && s.target.appId === target.appId) staged.delete(id as string);
}
