/**
 * Workers R2 buckets over the account's blob store (`r2_objects` names each object's blob), with
 * R2's rules as `wrangler dev` gives them: an etag that is the MD5 of the bytes, `md5`/`sha*`
 * checks, `onlyIf` conditions (a put that fails one stores nothing and answers null; a get answers
 * the object without its body), ranges, a key of at most 1,024 UTF-8 bytes, custom metadata of at
 * most 2 KiB, and R2's messages (`put: The specified object name is not valid. (10020)`). Listing
 * and multipart uploads are in r2-list.ts and r2-multipart.ts. What the binding checks itself
 * (argument types, one hash at most, a negative offset) is checked in the guest
 * (guest/chunks/r2.js).
 */
import { createHash, randomBytes } from 'node:crypto';
import { blobStore } from '../blobs/store.ts';
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { storageQuota } from '../storage/quota.ts';

export const R2_LIMITS = {
  keyBytes: 1024,
  customMetadataBytes: 2048,
  listKeys: 1000,
  deleteKeys: 1000,
  minPartBytes: 5 * 1024 * 1024,
  maxParts: 10_000,
} as const;

export type R2Target = { appId: string; accountId: string };

/** R2's refusals reach app code as `Error("<op>: <message> (<code>)")`, as Workers word them. */
export const r2Error = (op: string, message: string, code: number) =>
  new ApiError('invalid_request', `${op}: ${message} (${code})`);

export function r2Key(op: string, key: unknown): Buffer {
  const bytes = Buffer.from(typeof key === 'string' ? key : String(key), 'utf8');
  if (bytes.length > R2_LIMITS.keyBytes)
    throw r2Error(op, 'The specified object name is not valid.', 10020);
  return bytes;
}

/** An object as app code's R2Object is made from it (guest/chunks/r2.js). */
export type R2Meta = {
  key: string;
  version: string;
  size: number;
  etag: string;
  uploaded: string;
  checksums: Record<string, string>;
  httpMetadata: Record<string, string>;
  customMetadata: Record<string, string>;
  range?: { offset: number; length: number };
};

type ObjectRow = {
  key: Buffer;
  version: string;
  sha256: Buffer | null;
  pieces: Buffer[] | null;
  piece_sizes: (string | number)[] | null;
  size: string | number;
  etag: string;
  checksums: Record<string, string>;
  http_metadata: Record<string, string>;
  custom_metadata: Record<string, string>;
  uploaded: Date;
};

/** A blob of the account that holds some of an object's bytes, in order. */
export type Piece = { sha256: Buffer; size: number };

export function piecesOf(
  row: Pick<ObjectRow, 'sha256' | 'pieces' | 'piece_sizes' | 'size'>,
): Piece[] {
  if (row.sha256) return [{ sha256: row.sha256, size: Number(row.size) }];
  return (row.pieces ?? []).map((sha256, i) => ({ sha256, size: Number(row.piece_sizes![i]) }));
}

export const metaOf = (r: ObjectRow): R2Meta => ({
  key: r.key.toString('utf8'),
  version: r.version,
  size: Number(r.size),
  etag: r.etag,
  uploaded: r.uploaded.toISOString(),
  checksums: r.checksums ?? {},
  httpMetadata: r.http_metadata ?? {},
  customMetadata: r.custom_metadata ?? {},
});

export async function objectRow(
  db: Executor,
  target: R2Target,
  bucket: string,
  key: Buffer,
  lock = false,
): Promise<ObjectRow | undefined> {
  let q = db
    .selectFrom('r2_objects')
    .select([
      'key',
      'version',
      'sha256',
      'pieces',
      'piece_sizes',
      'size',
      'etag',
      'checksums',
      'http_metadata',
      'custom_metadata',
      'uploaded',
    ])
    .where('app_id', '=', target.appId)
    .where('bucket', '=', bucket)
    .where('key', '=', key);
  if (lock) q = q.forUpdate();
  return (await q.executeTakeFirst()) as ObjectRow | undefined;
}

/** One etag condition, as the guest parsed it: `"x"` strong, `W/"x"` weak, `*` any. */
type EtagCond = { type: 'strong' | 'weak' | 'wildcard'; value?: string };
export type Conditions = {
  etagMatches?: EtagCond[];
  etagDoesNotMatch?: EtagCond[];
  uploadedBefore?: string;
  uploadedAfter?: string;
  secondsGranularity?: boolean;
};

const includesEtag = (conds: EtagCond[], etag: string, comparison: 'strong' | 'weak') =>
  conds.some(
    (c) =>
      c.type === 'wildcard' || (c.value === etag && (comparison === 'weak' || c.type === 'strong')),
  );

/** Whether R2's conditions hold for the object (undefined: there is none), as R2 tests them. */
export function conditionsHold(cond: Conditions | undefined, row: ObjectRow | undefined): boolean {
  if (!cond) return true;
  if (!row) return cond.etagMatches === undefined && cond.uploadedAfter === undefined;
  const trunc = (ms: number) => (cond.secondsGranularity ? Math.floor(ms / 1000) * 1000 : ms);
  const modified = trunc(row.uploaded.getTime());
  const ifMatch =
    cond.etagMatches === undefined || includesEtag(cond.etagMatches, row.etag, 'strong');
  const ifNoneMatch =
    cond.etagDoesNotMatch === undefined || !includesEtag(cond.etagDoesNotMatch, row.etag, 'weak');
  const after =
    cond.uploadedAfter === undefined ||
    trunc(Date.parse(cond.uploadedAfter)) < modified ||
    (cond.etagDoesNotMatch !== undefined && ifNoneMatch);
  const before =
    cond.uploadedBefore === undefined ||
    modified < trunc(Date.parse(cond.uploadedBefore)) ||
    (cond.etagMatches !== undefined && ifMatch);
  return ifMatch && ifNoneMatch && after && before;
}

const HASHES = [
  ['md5', 'MD5'],
  ['sha1', 'SHA-1'],
  ['sha256', 'SHA-256'],
  ['sha384', 'SHA-384'],
  ['sha512', 'SHA-512'],
] as const;

/** The custom metadata's size as R2 counts it (a string with a character past U+00FF counts twice). */
function metadataSize(custom: Record<string, string>): number {
  const len = (s: string) => (/[^\u0000-\u00ff]/.test(s) ? s.length * 2 : s.length);
  return Object.entries(custom).reduce((n, [k, v]) => n + len(k) + len(v), 0);
}

/** Writes an object's row (a new version, replacing what the key held) and answers it as app code sees it. */
export async function writeObject(
  trx: Executor,
  target: R2Target,
  bucket: string,
  key: Buffer,
  o: ({ sha256: Buffer } | { pieces: Piece[] }) & {
    size: number;
    etag: string;
    checksums: Record<string, string>;
    httpMetadata: Record<string, string>;
    customMetadata: Record<string, string>;
  },
): Promise<R2Meta> {
  const row = {
    version: randomBytes(16).toString('hex'),
    ...('sha256' in o
      ? { sha256: o.sha256, pieces: null, piece_sizes: null }
      : {
          sha256: null,
          pieces: o.pieces.map((p) => p.sha256),
          piece_sizes: o.pieces.map((p) => p.size),
        }),
    size: o.size,
    etag: o.etag,
    checksums: JSON.stringify(o.checksums),
    http_metadata: JSON.stringify(o.httpMetadata),
    custom_metadata: JSON.stringify(o.customMetadata),
    uploaded: new Date(),
  };
  await trx
    .insertInto('r2_objects')
    .values({ app_id: target.appId, bucket, key, ...row })
    .onConflict((oc) => oc.columns(['app_id', 'bucket', 'key']).doUpdateSet(row))
    .execute();
  return metaOf({
    ...row,
    key,
    checksums: o.checksums,
    http_metadata: o.httpMetadata,
    custom_metadata: o.customMetadata,
  });
}

export type PutOptions = {
  httpMetadata?: Record<string, string>;
  customMetadata?: Record<string, string>;
  /** the one hash app code gave, as hex (the guest converts buffers) */
  hash?: { field: string; hex: string };
  onlyIf?: Conditions;
};

/** The hash app code gave, checked against the bytes' (R2's message when they differ). */
export function verifyHash(field: string, givenHex: string, actual: string): string {
  const name = HASHES.find(([f]) => f === field)?.[1] ?? field;
  const given = givenHex.toLowerCase();
  if (actual !== given)
    throw r2Error(
      'put',
      [
        `The ${name} checksum you specified did not match what we received.`,
        `You provided a ${name} checksum with value: ${given}`,
        `Actual ${name} was: ${actual}`,
      ].join('\n'),
      10037,
    );
  return actual;
}

export function checkCustomMetadata(op: string, custom: Record<string, string>): void {
  if (metadataSize(custom) > R2_LIMITS.customMetadataBytes)
    throw r2Error(op, 'Your metadata headers exceed the maximum allowed metadata size.', 10012);
}

/** Stores an object (its bytes arrive beside the call); null when `onlyIf` does not hold. */
export async function r2Put(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  bytes: Buffer,
  options: PutOptions,
): Promise<R2Meta | null> {
  const key = r2Key('put', keyArg);
  const custom = options.customMetadata ?? {};
  checkCustomMetadata('put', custom);
  const md5 = createHash('md5').update(bytes).digest('hex');
  const checksums: Record<string, string> = { md5 };
  if (options.hash) {
    const f = options.hash.field;
    if (HASHES.some(([h]) => h === f)) {
      const actual = f === 'md5' ? md5 : createHash(f).update(bytes).digest('hex');
      checksums[f] = verifyHash(f, options.hash.hex, actual);
    }
  }
  const sha256 = createHash('sha256').update(bytes).digest();
  const quota = storageQuota(deps);
  await quota.check(target.accountId, bytes.length);
  const result = await deps.db.transaction().execute(async (trx) => {
    const existing = await objectRow(trx, target, bucket, key, true);
    if (!conditionsHold(options.onlyIf, existing)) return null;
    await blobStore(deps.config).putMany(trx, target.accountId, [{ sha256, bytes }]);
    const meta = await writeObject(trx, target, bucket, key, {
      sha256,
      size: bytes.length,
      etag: md5,
      checksums,
      httpMetadata: options.httpMetadata ?? {},
      customMetadata: custom,
    });
    return { meta, freed: existing ? Number(existing.size) : 0 };
  });
  if (!result) return null;
  quota.added(target.accountId, bytes.length - result.freed);
  return result.meta;
}

/** The byte range a get asks for, resolved against the size, as R2 resolves it. */
export type RangeAsk = { offset?: number; length?: number; suffix?: number } | { header: string };

function rangeOf(ask: RangeAsk | undefined, size: number): { offset: number; length: number } {
  const whole = { offset: 0, length: size };
  if (!ask) return whole;
  if ('header' in ask) {
    const m = /^bytes=(\d*)-(\d*)$/.exec(ask.header.trim());
    if (!m || (m[1] === '' && m[2] === '')) return whole;
    if (m[1] === '') {
      const n = Math.min(Number(m[2]), size);
      return { offset: size - n, length: n };
    }
    const start = Number(m[1]);
    const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (start >= size || end < start)
      throw r2Error('get', 'The requested range is not satisfiable', 10039);
    return { offset: start, length: end - start + 1 };
  }
  let { offset, length } = ask;
  if (ask.suffix !== undefined) {
    if (ask.suffix <= 0) throw r2Error('get', 'The requested range is not satisfiable', 10039);
    const n = Math.min(ask.suffix, size);
    offset = size - n;
    length = n;
  }
  offset ??= 0;
  length ??= size - offset;
  if (offset < 0 || offset > size || length <= 0)
    throw r2Error('get', 'The requested range is not satisfiable', 10039);
  return { offset, length: Math.min(length, size - offset) };
}

/**
 * `head` (no body) or `get`: null for no object; no `pieces` when there is no body to read
 * (a head, or `onlyIf` did not hold); else the pieces to read `meta.range` of (r2-bytes.ts).
 */
export async function r2Get(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keyArg: unknown,
  options: { range?: RangeAsk; onlyIf?: Conditions; head?: boolean },
): Promise<{ meta: R2Meta; pieces?: Piece[] } | null> {
  const op = options.head ? 'head' : 'get';
  const key = r2Key(op, keyArg);
  const row = await objectRow(deps.db, target, bucket, key);
  if (!row) return null;
  const meta = metaOf(row);
  if (options.head || !conditionsHold(options.onlyIf, row))
    return { meta: { ...meta, range: { offset: 0, length: meta.size } } };
  return { meta: { ...meta, range: rangeOf(options.range, meta.size) }, pieces: piecesOf(row) };
}

export async function r2Delete(
  deps: Deps,
  target: R2Target,
  bucket: string,
  keys: unknown,
): Promise<number> {
  const list = (Array.isArray(keys) ? keys : [keys]).map((k) => r2Key('delete', k));
  if (list.length > R2_LIMITS.deleteKeys)
    throw r2Error('delete', 'You can delete at most 1000 objects at once.', 10029);
  if (!list.length) return 0;
  const gone = await deps.db
    .deleteFrom('r2_objects')
    .where('app_id', '=', target.appId)
    .where('bucket', '=', bucket)
    .where('key', 'in', list)
    .returning('size')
    .execute();
  const freed = gone.reduce((n, r) => n + Number(r.size), 0);
  if (freed) storageQuota(deps).added(target.accountId, -freed);
  return gone.length;
}
