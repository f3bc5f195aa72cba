/**
 * Deno KV (`Deno.openKv()`) over the same store as Workers KV (`kv_entries`, namespace `deno:kv`,
 * which no binding name can spell): keys arrive encoded by the guest in Deno's own key order
 * (guest/chunks/deno-kv.js: byte strings, strings, bigints, numbers, booleans, each part ordered
 * as Deno orders it), values as the structured clone's JSON, and every write takes a versionstamp
 * from one sequence, so `atomic()` checks compare real versions. A commit runs in one transaction
 * with the rows it checks and writes locked: all of it happens, or none (`{ ok: false }` when a
 * check fails).
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { storageQuota } from '../storage/quota.ts';

export const DENO_KV_NAMESPACE = 'deno:kv';
export const DENO_KV_LIMITS = {
  keyBytes: 2048,
  valueBytes: 65_536,
  checks: 100,
  mutations: 1000,
  listLimit: 1000,
  getMany: 10,
} as const;

export type DenoKvTarget = { appId: string; accountId: string };

const refused = (message: string) => new ApiError('invalid_request', message);
const keyOf = (b64: unknown): Buffer => {
  if (typeof b64 !== 'string') throw refused('a key must be encoded');
  return Buffer.from(b64, 'base64');
};
const stamp = (version: string | number) => BigInt(version).toString(16).padStart(16, '0') + '0000';
const live = sql<boolean>`(expires_at is null or expires_at > now())`;

type Entry = { key: string; value: string; versionstamp: string };

export async function denoKvGet(
  deps: Deps,
  target: DenoKvTarget,
  keys: unknown,
): Promise<(Entry | null)[]> {
  const list = (Array.isArray(keys) ? keys : []).map(keyOf);
  if (!list.length) return [];
  const rows = await deps.db
    .selectFrom('kv_entries')
    .select(['key', 'value', 'version'])
    .where('app_id', '=', target.appId)
    .where('namespace', '=', DENO_KV_NAMESPACE)
    .where('key', 'in', list)
    .where(live)
    .execute();
  const byKey = new Map(rows.map((r) => [r.key.toString('base64'), r]));
  return list.map((k) => {
    const r = byKey.get(k.toString('base64'));
    return r
      ? {
          key: k.toString('base64'),
          value: r.value!.toString('utf8'),
          versionstamp: stamp(r.version),
        }
      : null;
  });
}

/** Keys from `start` (inclusive) to `end` (exclusive), in order or reversed, at most `limit`. */
export async function denoKvList(
  deps: Deps,
  target: DenoKvTarget,
  options: { start?: unknown; end?: unknown; reverse?: unknown; limit?: unknown },
): Promise<Entry[]> {
  const limit = Math.min(Number(options.limit ?? 100) || 100, DENO_KV_LIMITS.listLimit);
  let q = deps.db
    .selectFrom('kv_entries')
    .select(['key', 'value', 'version'])
    .where('app_id', '=', target.appId)
    .where('namespace', '=', DENO_KV_NAMESPACE)
    .where(live)
    .orderBy('key', options.reverse === true ? 'desc' : 'asc')
    .limit(limit);
  if (typeof options.start === 'string') q = q.where('key', '>=', keyOf(options.start));
  if (typeof options.end === 'string') q = q.where('key', '<', keyOf(options.end));
  const rows = await q.execute();
  return rows.map((r) => ({
    key: r.key.toString('base64'),
    value: r.value!.toString('utf8'),
    versionstamp: stamp(r.version),
  }));
}

type Mutation = {
  type: 'set' | 'delete' | 'sum' | 'min' | 'max';
  key: string;
  value?: string;
  /** sum/min/max: the KvU64 operand, as decimal */
  u64?: string;
  expireIn?: number;
};

const U64_MAX = (1n << 64n) - 1n;
/** A stored KvU64 (the guest writes it as `{"$u64":"…"}`), or undefined for any other value. */
function u64Of(value: Buffer | null): bigint | undefined {
  if (!value) return undefined;
  try {
    const v = JSON.parse(value.toString('utf8')) as { $u64?: unknown };
    return typeof v?.$u64 === 'string' ? BigInt(v.$u64) : undefined;
  } catch {
    return undefined;
  }
}
const u64Json = (n: bigint) => JSON.stringify({ $u64: n.toString() });

/** An atomic commit: every check holds (null: the key must not exist), then every mutation, or nothing. */
export async function denoKvCommit(
  deps: Deps,
  target: DenoKvTarget,
  checks: unknown,
  mutations: unknown,
): Promise<{ ok: true; versionstamp: string } | { ok: false }> {
  const cs = (Array.isArray(checks) ? checks : []) as {
    key: string;
    versionstamp: string | null;
  }[];
  const ms = (Array.isArray(mutations) ? mutations : []) as Mutation[];
  if (cs.length > DENO_KV_LIMITS.checks) throw refused('Too many checks (max 100)');
  if (ms.length > DENO_KV_LIMITS.mutations) throw refused('Too many mutations (max 1000)');
  for (const m of ms) {
    if (keyOf(m.key).length > DENO_KV_LIMITS.keyBytes)
      throw refused(`Key too large for write (max ${DENO_KV_LIMITS.keyBytes} bytes)`);
    if (m.value !== undefined && Buffer.byteLength(m.value) > DENO_KV_LIMITS.valueBytes)
      throw refused(`Value too large (max ${DENO_KV_LIMITS.valueBytes} bytes)`);
  }
  const added = ms.reduce((n, m) => n + (m.value ? Buffer.byteLength(m.value) : 0), 0);
  const quota = storageQuota(deps);
  if (added) await quota.check(target.accountId, added);
  return deps.db.transaction().execute(async (trx) => {
    const touched = [...new Set([...cs.map((c) => c.key), ...ms.map((m) => m.key)])].map(keyOf);
    const rows = touched.length
      ? await trx
          .selectFrom('kv_entries')
          .select(['key', 'value', 'version', 'expires_at'])
          .where('app_id', '=', target.appId)
          .where('namespace', '=', DENO_KV_NAMESPACE)
          .where('key', 'in', touched)
          .orderBy('key')
          .forUpdate()
          .execute()
      : [];
    const now = Date.now();
    const current = new Map(
      rows
        .filter((r) => !r.expires_at || r.expires_at.getTime() > now)
        .map((r) => [r.key.toString('base64'), r]),
    );
    for (const c of cs) {
      const r = current.get(keyOf(c.key).toString('base64'));
      if ((c.versionstamp ?? null) !== (r ? stamp(r.version) : null)) return { ok: false as const };
    }
    const { rows: seq } = await sql<{
      v: string;
    }>`select nextval('kv_versions')::text as v`.execute(trx);
    const version = seq[0]!.v;
    for (const m of ms) await apply(trx, target, m, current, version);
    return { ok: true as const, versionstamp: stamp(version) };
  });
}

async function apply(
  trx: Executor,
  target: DenoKvTarget,
  m: Mutation,
  current: Map<string, { value: Buffer | null }>,
  version: string,
): Promise<void> {
  const key = keyOf(m.key);
  if (m.type === 'delete') {
    await trx
      .deleteFrom('kv_entries')
      .where('app_id', '=', target.appId)
      .where('namespace', '=', DENO_KV_NAMESPACE)
      .where('key', '=', key)
      .execute();
    current.delete(key.toString('base64'));
    return;
  }
  let text: string;
  if (m.type === 'set') text = String(m.value);
  else {
    const operand = BigInt(m.u64 ?? '0');
    const before = current.get(key.toString('base64'));
    const had = before ? u64Of(before.value) : undefined;
    if (before && had === undefined)
      throw refused(`Failed to perform '${m.type}' mutation on a non-U64 value in the database`);
    const next =
      had === undefined
        ? operand
        : m.type === 'sum'
          ? (had + operand) & U64_MAX
          : m.type === 'min'
            ? had < operand
              ? had
              : operand
            : had > operand
              ? had
              : operand;
    text = u64Json(next);
  }
  const value = Buffer.from(text, 'utf8');
  const row = {
    value,
    sha256: null,
    size: value.length,
    metadata: null,
    expires_at: m.expireIn ? new Date(Date.now() + Number(m.expireIn)) : null,
    updated_at: new Date(),
    version,
  };
  await trx
    .insertInto('kv_entries')
    .values({ app_id: target.appId, namespace: DENO_KV_NAMESPACE, key, ...row })
    .onConflict((oc) => oc.columns(['app_id', 'namespace', 'key']).doUpdateSet(row))
    .execute();
  current.set(key.toString('base64'), { value });
}
