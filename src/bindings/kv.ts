/**
 * Workers KV namespaces over Postgres (`kv_entries`), values over 64 KiB in the account's blob
 * store. The limits and the messages for breaking them are KV's as `wrangler dev` gives them (a key
 * of 1 to 512 UTF-8 bytes, a value of at most 25 MiB, metadata of at most 1 KiB of JSON, an
 * expiration at least 60 s ahead, a list of at most 1,000 keys, a bulk get of 1 to 100 keys), so
 * an app's own handling of them works unchanged. What the binding checks before it calls out (an
 * empty key, `.` and `..`, the value's type) is checked in the guest (guest/chunks/bindings.js),
 * with the TypeErrors Workers throw there. Expired entries are never read and are swept hourly.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { blobStore } from '../blobs/store.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { storageQuota } from '../storage/quota.ts';

export const KV_LIMITS = {
  keyBytes: 512,
  valueBytes: 25 * 1024 * 1024,
  metadataBytes: 1024,
  minExpirationTtl: 60,
  minCacheTtl: 30,
  listKeys: 1000,
  bulkKeys: 100,
  /** values up to this stay in their row; larger ones are blobs */
  inlineBytes: 64 * 1024,
} as const;

export type KvTarget = { appId: string; accountId: string };

/** KV's failures reach app code as `Error("KV <OP> failed: <status> <message>")`, as Workers' binding words them. */
const failed = (op: string, status: number, message: string) =>
  new ApiError('invalid_request', `KV ${op} failed: ${status} ${message}`);

/** A key's bytes, or KV's refusal (a lone surrogate cannot be encoded; a long key is refused by its UTF-8 length). */
function keyBytes(op: string, key: unknown): Buffer {
  if (typeof key !== 'string') throw failed(op, 400, 'Key names must not be empty');
  // a lone surrogate has no UTF-8 form (with the u flag a pair is one code point, which does not match)
  if (/[\ud800-\udfff]/u.test(key)) throw failed(op, 400, 'Could not URL-decode key name');
  if (key === '') throw failed(op, 400, 'Key names must not be empty');
  if (key === '.' || key === '..')
    throw failed(op, 400, `Illegal key name "${key}". Please use a different name.`);
  const bytes = Buffer.from(key, 'utf8');
  if (bytes.length > KV_LIMITS.keyBytes)
    throw failed(
      op,
      414,
      `UTF-8 encoded length of ${bytes.length} exceeds key length limit of ${KV_LIMITS.keyBytes}.`,
    );
  return bytes;
}

function checkCacheTtl(op: string, cacheTtl: unknown): void {
  if (cacheTtl === undefined || cacheTtl === null) return;
  const n = Number(cacheTtl);
  if (Number.isNaN(n) || n < KV_LIMITS.minCacheTtl)
    throw failed(
      op,
      400,
      `Invalid cache_ttl of ${cacheTtl}. Cache TTL must be at least ${KV_LIMITS.minCacheTtl}.`,
    );
}

type Row = {
  key: Buffer;
  value: Buffer | null;
  sha256: Buffer | null;
  metadata: unknown;
  expires_at: Date | null;
};

const expirationOf = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : undefined);

async function valueOf(deps: Deps, target: KvTarget, row: Row): Promise<Buffer> {
  if (row.value) return row.value;
  const bytes = await blobStore(deps.config).get(deps.db, target.accountId, row.sha256!);
  if (!bytes) throw new Error(`KV value blob of app ${target.appId} is missing`);
  return bytes;
}

async function readRows(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  keys: Buffer[],
): Promise<Map<string, Row>> {
  const rows = await deps.db
    .selectFrom('kv_entries')
    .select(['key', 'value', 'sha256', 'metadata', 'expires_at'])
    .where('app_id', '=', target.appId)
    .where('namespace', '=', namespace)
    .where('key', 'in', keys)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .execute();
  return new Map(rows.map((r) => [r.key.toString('hex'), r as Row]));
}

/** One key's value and what came with it, or null. */
export async function kvGet(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  key: unknown,
  options: { cacheTtl?: unknown },
): Promise<{ bytes: Buffer; metadata: unknown; expiration?: number } | null> {
  const k = keyBytes('GET', key);
  checkCacheTtl('GET', options.cacheTtl);
  const row = (await readRows(deps, target, namespace, [k])).get(k.toString('hex'));
  if (!row) return null;
  return {
    bytes: await valueOf(deps, target, row),
    metadata: row.metadata ?? null,
    ...(row.expires_at ? { expiration: expirationOf(row.expires_at)! } : {}),
  };
}

/** Up to 100 keys at once, as text (the guest parses JSON): `{ key: { value, metadata } | null }`. */
export async function kvGetBulk(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  keys: unknown,
  options: { type?: unknown; cacheTtl?: unknown },
): Promise<Record<string, { value: string; metadata: unknown } | null>> {
  const type = options.type ?? 'text';
  if (type !== 'text' && type !== 'json')
    throw failed('GET_BULK', 400, `"${String(type)}" is not a valid type. Use "json" or "text"`);
  const list = Array.isArray(keys) ? keys : [];
  if (list.length > KV_LIMITS.bulkKeys)
    throw failed('GET_BULK', 400, `You can request a maximum of ${KV_LIMITS.bulkKeys} keys`);
  if (list.length < 1) throw failed('GET_BULK', 400, 'You must request a minimum of 1 key');
  const bytes = list.map((k) => keyBytes('GET_BULK', k));
  checkCacheTtl('GET_BULK', options.cacheTtl);
  const rows = await readRows(deps, target, namespace, bytes);
  const out: Record<string, { value: string; metadata: unknown } | null> = {};
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    const row = rows.get(bytes[i]!.toString('hex'));
    if (!row) {
      out[list[i] as string] = null;
      continue;
    }
    const value = await valueOf(deps, target, row);
    total += value.length;
    if (total > KV_LIMITS.valueBytes)
      throw failed('GET_BULK', 413, 'Total size of request exceeds the limit of 25MB');
    out[list[i] as string] = { value: value.toString('utf8'), metadata: row.metadata ?? null };
  }
  return out;
}

/** The expiration a put asks for (seconds since the epoch), or KV's refusal. */
function expirationFor(options: { expiration?: unknown; expirationTtl?: unknown }, now: number) {
  if (options.expirationTtl !== undefined && options.expirationTtl !== null) {
    const raw = options.expirationTtl;
    const ttl = Number.parseInt(String(raw), 10);
    if (Number.isNaN(ttl) || ttl <= 0)
      throw failed(
        'PUT',
        400,
        `Invalid expiration_ttl of ${raw}. Please specify integer greater than 0.`,
      );
    if (ttl < KV_LIMITS.minExpirationTtl)
      throw failed(
        'PUT',
        400,
        `Invalid expiration_ttl of ${raw}. Expiration TTL must be at least ${KV_LIMITS.minExpirationTtl}.`,
      );
    return now + ttl;
  }
  if (options.expiration !== undefined && options.expiration !== null) {
    const raw = options.expiration;
    const at = Number.parseInt(String(raw), 10);
    if (Number.isNaN(at) || at <= now)
      throw failed(
        'PUT',
        400,
        `Invalid expiration of ${raw}. Please specify integer greater than the current number of seconds since the UNIX epoch.`,
      );
    if (at < now + KV_LIMITS.minExpirationTtl)
      throw failed(
        'PUT',
        400,
        `Invalid expiration of ${raw}. Expiration times must be at least ${KV_LIMITS.minExpirationTtl} seconds in the future.`,
      );
    return at;
  }
  return undefined;
}

/** Writes a key (replacing what it held): its value's bytes arrive beside the call, copied by the sandbox worker. */
export async function kvPut(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  key: unknown,
  value: Buffer,
  options: { expiration?: unknown; expirationTtl?: unknown; metadata?: unknown },
): Promise<void> {
  const k = keyBytes('PUT', key);
  const now = Math.floor(Date.now() / 1000);
  const expiration = expirationFor(options, now);
  let metadata: string | null = null;
  if (typeof options.metadata === 'string') {
    const length = Buffer.byteLength(options.metadata);
    if (length > KV_LIMITS.metadataBytes)
      throw failed(
        'PUT',
        413,
        `Metadata length of ${length} exceeds limit of ${KV_LIMITS.metadataBytes}.`,
      );
    try {
      JSON.parse(options.metadata);
    } catch {
      throw failed('PUT', 400, 'Metadata must be JSON.');
    }
    metadata = options.metadata;
  }
  if (value.length > KV_LIMITS.valueBytes)
    throw failed(
      'PUT',
      413,
      `Value length of ${value.length} exceeds limit of ${KV_LIMITS.valueBytes}.`,
    );
  const quota = storageQuota(deps);
  await quota.check(target.accountId, value.length);
  const inline = value.length <= KV_LIMITS.inlineBytes;
  const sha256 = inline ? null : createHash('sha256').update(value).digest();
  const previous = await deps.db.transaction().execute(async (trx) => {
    if (sha256)
      await blobStore(deps.config).putMany(trx, target.accountId, [{ sha256, bytes: value }]);
    const before = await trx
      .selectFrom('kv_entries')
      .select('size')
      .where('app_id', '=', target.appId)
      .where('namespace', '=', namespace)
      .where('key', '=', k)
      .forUpdate()
      .executeTakeFirst();
    const row = {
      value: inline ? value : null,
      sha256,
      size: value.length,
      metadata,
      expires_at: expiration === undefined ? null : new Date(expiration * 1000),
      updated_at: new Date(),
    };
    await trx
      .insertInto('kv_entries')
      .values({ app_id: target.appId, namespace, key: k, ...row })
      .onConflict((oc) => oc.columns(['app_id', 'namespace', 'key']).doUpdateSet(row))
      .execute();
    return before?.size ?? 0;
  });
  quota.added(target.accountId, value.length - previous);
}

export async function kvDelete(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  key: unknown,
): Promise<boolean> {
  const k = keyBytes('DELETE', key);
  const gone = await deps.db
    .deleteFrom('kv_entries')
    .where('app_id', '=', target.appId)
    .where('namespace', '=', namespace)
    .where('key', '=', k)
    .returning('size')
    .executeTakeFirst();
  if (gone) storageQuota(deps).added(target.accountId, -gone.size);
  return gone !== undefined;
}

/** A list cursor: the last key of the page, opaque to the app (anything else lists nothing, as KV does). */
const CURSOR = 'k1.';

export type KvListed = {
  keys: { name: string; expiration?: number; metadata?: unknown }[];
  list_complete: boolean;
  cursor?: string;
};

/** Keys in byte order, from after `cursor`, those starting with `prefix`, at most `limit`. */
export async function kvList(
  deps: Deps,
  target: KvTarget,
  namespace: string,
  options: { prefix?: unknown; limit?: unknown; cursor?: unknown },
  /** the console's search (never app code's): keys whose name, value (one kept in its row) or metadata hold this text */
  contains?: string,
): Promise<KvListed> {
  let limit: number = KV_LIMITS.listKeys;
  if (options.limit !== undefined && options.limit !== null) {
    limit = Number(options.limit);
    if (Number.isNaN(limit) || limit < 1)
      throw failed(
        'GET',
        400,
        `Invalid key_count_limit of ${options.limit}. Please specify an integer greater than 0.`,
      );
    if (limit > KV_LIMITS.listKeys)
      throw failed(
        'GET',
        400,
        `Invalid key_count_limit of ${options.limit}. Please specify an integer less than ${KV_LIMITS.listKeys}.`,
      );
    limit = Math.floor(limit);
  }
  const prefix =
    options.prefix === undefined || options.prefix === null
      ? Buffer.alloc(0)
      : Buffer.from(String(options.prefix), 'utf8');
  if (prefix.length > KV_LIMITS.keyBytes)
    throw failed(
      'GET',
      414,
      `UTF-8 encoded length of ${prefix.length} exceeds key length limit of ${KV_LIMITS.keyBytes}.`,
    );
  let after: Buffer | undefined;
  if (typeof options.cursor === 'string' && options.cursor !== '') {
    if (!options.cursor.startsWith(CURSOR)) return { keys: [], list_complete: true };
    after = Buffer.from(options.cursor.slice(CURSOR.length), 'base64url');
  }
  let q = deps.db
    .selectFrom('kv_entries')
    .select(['key', 'metadata', 'expires_at'])
    .where('app_id', '=', target.appId)
    .where('namespace', '=', namespace)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .orderBy('key')
    .limit(limit + 1);
  if (prefix.length)
    q = q
      .where('key', '>=', prefix)
      .where(sql<boolean>`substring(key from 1 for ${prefix.length}) = ${prefix}`);
  if (after) q = q.where('key', '>', after);
  if (contains) {
    const needle = Buffer.from(contains, 'utf8');
    q = q.where(
      // all as bytes: a search may hold NUL, which Postgres text cannot
      sql<boolean>`(position(${needle}::bytea in key) > 0 or position(${needle}::bytea in coalesce(value, ''::bytea)) > 0 or position(${needle}::bytea in convert_to(coalesce(metadata::text, ''), 'UTF8')) > 0)`,
    );
  }
  const rows = await q.execute();
  const page = rows.slice(0, limit);
  const keys = page.map((r) => ({
    name: r.key.toString('utf8'),
    ...(r.expires_at ? { expiration: expirationOf(r.expires_at)! } : {}),
    ...(r.metadata !== null && r.metadata !== undefined ? { metadata: r.metadata } : {}),
  }));
  if (rows.length <= limit) return { keys, list_complete: true };
  return {
    keys,
    list_complete: false,
    cursor: CURSOR + page[page.length - 1]!.key.toString('base64url'),
  };
}

/** Deletes entries past their expiration (the hourly sweep); returns how many. */
export async function sweepExpiredKv(deps: Deps, now = new Date()): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql`delete from kv_entries where ctid in (select ctid from kv_entries
      where expires_at is not null and expires_at <= ${now} limit 5000)`.execute(deps.db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < 5000) return total;
  }
}
