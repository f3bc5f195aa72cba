/**
 * App data collections for server code (`ctx.data.collection(name)`): rows in the shared
 * `app_rows` table scoped by app and collection, values checked against the declared field types,
 * unique indexes claimed in `app_row_uniques` in the row's own transaction (correct under
 * concurrent writes), soft delete via `deleted_at`. Errors carry a stable `code` for app code.
 */
import { MAX_JSON_DEPTH, nulAt, tooDeep } from '../lib/json.ts';
import { sql } from 'kysely';
import type { Executor, Tx } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { randomToken } from '../lib/ids.ts';
import { flattenResources, type CollectionSpec, type FieldSpec } from '../manifest/resources.ts';
import type { Manifest } from '../manifest/schema.ts';
import { ApiError } from '../errors.ts';
import { manifestOf } from '../manifest/stored.ts';
import { releaseManifest } from '../releases/records.ts';
import { storageQuota } from '../storage/quota.ts';

export const MAX_LIST_LIMIT = 1000;
export const DEFAULT_LIST_LIMIT = 100;
const MAX_ROW_BYTES = 1024 * 1024;
const RESERVED = new Set(['id', 'created_at', 'updated_at', 'deleted_at', 'data']);

export type DataTarget = {
  appId: string;
  /** Whose storage quota new and larger rows count against. */
  accountId: string;
  /** The release whose declarations `manifest` holds (a preview's, or one no longer live, as well). */
  releaseId: string;
  manifest: Manifest;
  /** Browser access: the app user writing (recorded as the row's owner on create). */
  actorUserId?: string | null;
  /** Browser access under an `owner` rule: only this user's rows exist. */
  onlyOwnerId?: string;
};
export type Row = { id: string; data: Record<string, unknown>; created_at: Date; updated_at: Date };

export function collectionSpec(
  target: DataTarget,
  name: string,
): { name: string; spec: CollectionSpec } {
  const r = flattenResources(target.manifest).find(
    (x) => x.resource_type === 'data' && x.resource_name === name,
  );
  if (!r)
    throw new ApiError(
      'collection_not_declared',
      `Collection "${name}" is not declared in this release's resources.data.`,
    );
  return { name, spec: r.spec as CollectionSpec };
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** A declared field's value, checked and normalised (null clears a field). */
function checkValue(field: string, spec: FieldSpec, value: unknown): unknown {
  if (value === null) return null;
  const bad = (expected: string) =>
    new ApiError('invalid_value', `Field "${field}" must be ${expected}.`);
  switch (spec.type) {
    case 'string':
    case 'richtext':
      if (typeof value !== 'string') throw bad('a string');
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw bad('an integer');
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('a finite number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw bad('true or false');
      return value;
    case 'datetime': {
      if (typeof value !== 'string' || !ISO_DATETIME.test(value) || Number.isNaN(Date.parse(value)))
        throw bad('an ISO 8601 date-time such as 2026-11-21T10:00:00Z');
      return new Date(value).toISOString();
    }
    case 'json':
      if (tooDeep(value)) throw bad(`JSON nested at most ${MAX_JSON_DEPTH} levels deep`);
      return value;
    case 'enum':
      if (typeof value !== 'string' || !spec.values!.includes(value))
        throw bad(`one of ${spec.values!.map((v) => JSON.stringify(v)).join(', ')}`);
      return value;
    case 'reference':
      if (typeof value !== 'string' || !/^row_[0-9a-z]{20}$/.test(value))
        throw bad(`the id of a row in "${spec.collection}"`);
      return value;
    default:
      throw bad('of a known type');
  }
}

export function checkFields(spec: CollectionSpec, fields: unknown): Record<string, unknown> {
  if (!fields || typeof fields !== 'object' || Array.isArray(fields))
    throw new ApiError('invalid_value', 'Fields must be an object.');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields as Record<string, unknown>)) {
    if (RESERVED.has(k))
      throw new ApiError(
        'reserved_field',
        `"${k}" is managed by the platform and cannot be written.`,
      );
    const f = spec.fields[k];
    if (!f) throw new ApiError('unknown_field', `Field "${k}" is not declared in this collection.`);
    if (v === undefined) continue;
    if (nulAt(v) !== null)
      throw new ApiError(
        'invalid_value',
        `Field "${k}" contains a NUL character (U+0000), which cannot be stored.`,
      );
    out[k] = checkValue(k, f, v);
  }
  return out;
}

async function checkReferences(
  trx: Executor,
  appId: string,
  spec: CollectionSpec,
  values: Record<string, unknown>,
): Promise<void> {
  for (const [k, v] of Object.entries(values)) {
    const f = spec.fields[k]!;
    if (f.type !== 'reference' || v === null) continue;
    const hit = await trx
      .selectFrom('app_rows')
      .select('id')
      .where('app_id', '=', appId)
      .where('collection', '=', f.collection!)
      .where('id', '=', v as string)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!hit)
      throw new ApiError(
        'reference_not_found',
        `Field "${k}" names ${String(v)}, which is not a row of "${f.collection}".`,
      );
  }
}

/** Claims the row's unique keys; a key another row holds is `unique_violation`. */
async function claimUniques(
  trx: Tx,
  appId: string,
  collection: string,
  spec: CollectionSpec,
  rowId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await trx
    .deleteFrom('app_row_uniques')
    .where('app_id', '=', appId)
    .where('collection', '=', collection)
    .where('row_id', '=', rowId)
    .execute();
  for (const index of spec.indexes.filter((i) => i.unique)) {
    const parts = index.fields.map((f) => data[f]);
    if (parts.some((p) => p === null || p === undefined)) continue; // as in SQL, nulls do not collide
    const key = JSON.stringify(parts);
    const claimed = await trx
      .insertInto('app_row_uniques')
      .values({ app_id: appId, collection, index_name: index.name, key, row_id: rowId })
      .onConflict((oc) => oc.doNothing())
      .returning('row_id')
      .executeTakeFirst();
    if (!claimed)
      throw new ApiError(
        'unique_violation',
        `Another row already has these values for unique index "${index.name}" (${index.fields.join(', ')}).`,
      );
  }
}

/** The app's live release, read with a share lock on the app row that a release going live waits for. */
async function lockedLive(trx: Tx, appId: string): Promise<string | null | undefined> {
  const app = await trx
    .selectFrom('apps')
    .select('live_release_id')
    .where('id', '=', appId)
    .forKeyShare()
    .executeTakeFirst();
  return app?.live_release_id;
}

/**
 * The indexes a write keeps for a collection: the writing release's, and the live release's where
 * the two differ (by the live one's definition for a name both use), read with a share lock on the
 * app row. Making a release live holds that row locked while it rebuilds index entries and claims
 * from the stored rows, so a write either commits before the rebuild reads them or runs after it
 * and keeps what the release made live declares (a request begun under the old release, a
 * preview writing to the data it shares).
 */
async function indexesKept(
  trx: Tx,
  target: DataTarget,
  name: string,
  spec: CollectionSpec,
): Promise<CollectionSpec> {
  const liveId = await lockedLive(trx, target.appId);
  if (!liveId || liveId === target.releaseId) return spec;
  const manifest = await releaseManifest(trx, liveId);
  const live = manifest ? declaredCollection(manifestOf(manifest), name)?.indexes : undefined;
  if (!live) return spec;
  const own = spec.indexes.filter((i) => !live.some((l) => l.name === i.name));
  return { ...spec, indexes: [...live, ...own] };
}

/** A row's entries in `indexes` (a row with a null in an index's fields is not in it). */
export function indexEntries(
  appId: string,
  collection: string,
  indexes: CollectionSpec['indexes'],
  rowId: string,
  createdAt: Date,
  data: Record<string, unknown>,
) {
  return indexes
    .map((index) => ({ index, parts: index.fields.map((f) => data[f]) }))
    .filter(({ parts }) => parts.every((p) => p !== null && p !== undefined))
    .map(({ index, parts }) => ({
      app_id: appId,
      collection,
      index_name: index.name,
      key: JSON.stringify(parts),
      created_at: createdAt,
      row_id: rowId,
    }));
}

/** Rewrites the row's entries in every declared index. */
async function writeIndexEntries(
  trx: Tx,
  appId: string,
  collection: string,
  spec: CollectionSpec,
  rowId: string,
  createdAt: Date,
  data: Record<string, unknown>,
): Promise<void> {
  await trx
    .deleteFrom('app_row_index_entries')
    .where('app_id', '=', appId)
    .where('collection', '=', collection)
    .where('row_id', '=', rowId)
    .execute();
  const entries = indexEntries(appId, collection, spec.indexes, rowId, createdAt, data);
  if (entries.length) await trx.insertInto('app_row_index_entries').values(entries).execute();
}

export function toApi(row: Row): Record<string, unknown> {
  return {
    id: row.id,
    ...row.data,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Declared field specs of a collection the release declares (for coercing query-string values). */
export function declaredCollection(manifest: Manifest, name: string): CollectionSpec | undefined {
  return flattenResources(manifest).find(
    (x) => x.resource_type === 'data' && x.resource_name === name,
  )?.spec as CollectionSpec | undefined;
}

/** A row's size as the storage quota counts it (src/storage/measure.ts): its JSON text as Postgres writes it. */
const STORED_SIZE = sql<number>`octet_length(data::text)`.as('size');

/** The row's size as JSON, refused past MAX_ROW_BYTES. */
function checkSize(data: Record<string, unknown>): number {
  const size = Buffer.byteLength(JSON.stringify(data));
  if (size > MAX_ROW_BYTES)
    throw new ApiError('row_too_large', 'A row may hold at most 1 MiB of JSON.');
  return size;
}

/** A row id as given (by app code or a URL): a string that can be stored, or undefined (matches nothing). */
export type RowId = string | undefined;

export async function createRow(
  deps: Deps,
  target: DataTarget,
  collection: string,
  fields: unknown,
): Promise<Record<string, unknown>> {
  const { name, spec } = collectionSpec(target, collection);
  const data = checkFields(spec, fields ?? {});
  const size = checkSize(data);
  const quota = storageQuota(deps);
  await quota.check(target.accountId, size);
  const created = await deps.db.transaction().execute(async (trx) => {
    const kept = await indexesKept(trx, target, name, spec);
    await checkReferences(trx, target.appId, spec, data);
    const id = `row_${randomToken(20)}`;
    await claimUniques(trx, target.appId, name, kept, id, data);
    const row = await trx
      .insertInto('app_rows')
      // Millisecond precision, so an (created_at, id) cursor carried through JSON is exact.
      .values({
        app_id: target.appId,
        collection: name,
        id,
        data: JSON.stringify(data),
        owner_user_id: target.actorUserId ?? null,
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returning(['id', 'data', 'created_at', 'updated_at', STORED_SIZE])
      .executeTakeFirstOrThrow();
    await writeIndexEntries(trx, target.appId, name, kept, id, row.created_at, data);
    return { row: toApi(row), stored: Number(row.size) };
  });
  // counted as the storage measure counts it (src/storage/measure.ts), so the running figure does not drift
  quota.added(target.accountId, created.stored);
  return created.row;
}

export async function updateRow(
  deps: Deps,
  target: DataTarget,
  collection: string,
  rowId: RowId,
  fields: unknown,
): Promise<Record<string, unknown>> {
  const { name, spec } = collectionSpec(target, collection);
  if (rowId === undefined) throw new ApiError('not_found', `No such row in "${name}".`);
  const id = rowId;
  const patch = checkFields(spec, fields ?? {});
  const quota = storageQuota(deps);
  const updated = await deps.db.transaction().execute(async (trx) => {
    const kept = await indexesKept(trx, target, name, spec);
    let cq = trx
      .selectFrom('app_rows')
      .select(['data', STORED_SIZE])
      .where('app_id', '=', target.appId)
      .where('collection', '=', name)
      .where('id', '=', id)
      .where('deleted_at', 'is', null);
    if (target.onlyOwnerId) cq = cq.where('owner_user_id', '=', target.onlyOwnerId);
    const current = await cq.forUpdate().executeTakeFirst();
    if (!current) throw new ApiError('not_found', `No row ${id} in "${name}".`);
    const data = { ...current.data, ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === null) delete data[k];
    await quota.check(
      target.accountId,
      checkSize(data) - Buffer.byteLength(JSON.stringify(current.data)),
      trx,
    );
    await checkReferences(trx, target.appId, spec, patch);
    await claimUniques(trx, target.appId, name, kept, id, data);
    const row = await trx
      .updateTable('app_rows')
      .set({ data: JSON.stringify(data), updated_at: new Date() })
      .where('app_id', '=', target.appId)
      .where('collection', '=', name)
      .where('id', '=', id)
      .returning(['id', 'data', 'created_at', 'updated_at', STORED_SIZE])
      .executeTakeFirstOrThrow();
    await writeIndexEntries(trx, target.appId, name, kept, id, row.created_at, data);
    return { row: toApi(row), growth: Number(row.size) - Number(current.size) };
  });
  quota.added(target.accountId, updated.growth);
  return updated.row;
}

export async function getRow(
  deps: Deps,
  target: DataTarget,
  collection: string,
  id: RowId,
): Promise<Record<string, unknown> | null> {
  const { name } = collectionSpec(target, collection);
  if (id === undefined) return null;
  let q = deps.db
    .selectFrom('app_rows')
    .select(['id', 'data', 'created_at', 'updated_at'])
    .where('app_id', '=', target.appId)
    .where('collection', '=', name)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  if (target.onlyOwnerId) q = q.where('owner_user_id', '=', target.onlyOwnerId);
  const row = await q.executeTakeFirst();
  return row ? toApi(row) : null;
}

export async function deleteRow(
  deps: Deps,
  target: DataTarget,
  collection: string,
  id: RowId,
): Promise<{ deleted: boolean }> {
  const { name } = collectionSpec(target, collection);
  if (id === undefined) return { deleted: false };
  const freed = await deps.db.transaction().execute(async (trx) => {
    // under the same lock, so a rebuild never claims for a row deleted in the meantime
    await lockedLive(trx, target.appId);
    let uq = trx
      .updateTable('app_rows')
      .set({ deleted_at: new Date() })
      .where('app_id', '=', target.appId)
      .where('collection', '=', name)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning(STORED_SIZE);
    if (target.onlyOwnerId) uq = uq.where('owner_user_id', '=', target.onlyOwnerId);
    const r = await uq.executeTakeFirst();
    if (!r) return undefined;
    await trx
      .deleteFrom('app_row_uniques')
      .where('app_id', '=', target.appId)
      .where('collection', '=', name)
      .where('row_id', '=', id)
      .execute();
    await trx
      .deleteFrom('app_row_index_entries')
      .where('app_id', '=', target.appId)
      .where('collection', '=', name)
      .where('row_id', '=', id)
      .execute();
    return Number(r.size);
  });
  if (freed === undefined) return { deleted: false };
  storageQuota(deps).added(target.accountId, -freed);
  return { deleted: true };
}
