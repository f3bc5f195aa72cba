/**
 * What a release going live builds from the rows already stored: the entries of indexes the
 * release before it did not declare, and the claims of unique indexes it did not declare unique.
 * A unique index new to the rows (added, made unique, given other fields, or declared again after
 * a release without it, whose writes claimed nothing for it) is checked against them first, and a
 * release whose rows do not fit it is refused (`uniqueConflicts`).
 */
import type { Tx } from '../db/database.ts';
import { type CollectionSpec, type ResourceState, resourceKey } from '../manifest/resources.ts';
import { indexEntries } from './service.ts';

type Index = CollectionSpec['indexes'][number];
type Changed = { collection: string; indexes: Index[] };

const indexesOf = (r: ResourceState | undefined) => (r?.spec.indexes as Index[] | undefined) ?? [];
const sameFields = (a: Index, b: Index) => a.fields.join('\0') === b.fields.join('\0');

/** Per collection of `next`, its indexes that `keep` says `before` lacks. */
function changed(
  before: ResourceState[],
  next: ResourceState[],
  keep: (index: Index, old: Index[]) => boolean,
): Changed[] {
  const out: Changed[] = [];
  for (const r of next) {
    if (r.resource_type !== 'data') continue;
    const old = indexesOf(before.find((b) => resourceKey(b) === resourceKey(r)));
    const indexes = indexesOf(r).filter((i) => keep(i, old));
    if (indexes.length) out.push({ collection: r.resource_name, indexes });
  }
  return out;
}

/** Indexes `next` declares that `before` did not, by name and fields. */
const freshIndexes = (before: ResourceState[], next: ResourceState[]) =>
  changed(before, next, (i, old) => !old.some((o) => o.name === i.name && sameFields(o, i)));

/** Unique indexes of `next` that `before` did not declare unique on the same fields. */
const claimedAfresh = (before: ResourceState[], next: ResourceState[]) =>
  changed(
    before,
    next,
    (i, old) => i.unique && !old.some((o) => o.name === i.name && o.unique && sameFields(o, i)),
  );

/** The key a row claims in a unique index (as the data API claims it), or null: nulls never collide. */
function claimKey(index: Index, data: Record<string, unknown>): string | null {
  const parts = index.fields.map((f) => data[f]);
  return parts.some((p) => p === null || p === undefined) ? null : JSON.stringify(parts);
}

type LiveRow = { id: string; createdAt: Date; data: Record<string, unknown> };

/** Each live row of a collection, 1,000 at a time, in id order. */
async function* liveRows(trx: Tx, appId: string, collection: string): AsyncGenerator<LiveRow> {
  let after = '';
  for (;;) {
    const rows = await trx
      .selectFrom('app_rows')
      .select(['id', 'data', 'created_at'])
      .where('app_id', '=', appId)
      .where('collection', '=', collection)
      .where('deleted_at', 'is', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (!rows.length) return;
    for (const r of rows)
      yield { id: r.id, createdAt: r.created_at, data: r.data as Record<string, unknown> };
    after = rows.at(-1)!.id;
  }
}

/**
 * Why `next` cannot go live over the stored rows: two that share a key of a unique index it declares
 * and the live release (`before`) does not declare unique on the same fields (new, made unique,
 * given other fields, or declared again after a release without it). Empty when the rows fit.
 */
export async function uniqueConflicts(
  trx: Tx,
  appId: string,
  before: ResourceState[],
  next: ResourceState[],
): Promise<string[]> {
  const reasons: string[] = [];
  for (const { collection, indexes } of claimedAfresh(before, next)) {
    for (const index of indexes) {
      const holder = new Map<string, string>();
      for await (const row of liveRows(trx, appId, collection)) {
        const key = claimKey(index, row.data);
        if (key === null) continue;
        const first = holder.get(key);
        if (first === undefined) {
          holder.set(key, row.id);
          continue;
        }
        reasons.push(
          `collection "${collection}" has rows that share values for unique index "${index.name}" (${index.fields.join(', ')}): ${first} and ${row.id}`,
        );
        break;
      }
    }
  }
  return reasons;
}

/**
 * Replaces what `table` holds for `indexes` of a collection with what `rowsOf` makes of each live
 * row, 1,000 a statement.
 */
async function rebuild<T>(
  trx: Tx,
  table: 'app_row_index_entries' | 'app_row_uniques',
  where: { appId: string; collection: string; indexes: Index[] },
  rowsOf: (row: LiveRow) => T[],
  insert: (batch: T[]) => Promise<unknown>,
): Promise<void> {
  await trx
    .deleteFrom(table)
    .where('app_id', '=', where.appId)
    .where('collection', '=', where.collection)
    .where(
      'index_name',
      'in',
      where.indexes.map((i) => i.name),
    )
    .execute();
  let batch: T[] = [];
  for await (const row of liveRows(trx, where.appId, where.collection)) {
    batch.push(...rowsOf(row));
    if (batch.length >= 1000) {
      await insert(batch);
      batch = [];
    }
  }
  if (batch.length) await insert(batch);
}

/**
 * Builds what `next` declares afresh over `before` from the rows, in the transaction that makes it
 * live: an index it declares that `before` did not (new, changed, or declared again after a release
 * without it) holds every row, not only those written since; a unique index it declares unique
 * afresh claims every row's key.
 */
export async function rebuildFromRows(
  trx: Tx,
  appId: string,
  before: ResourceState[],
  next: ResourceState[],
): Promise<void> {
  for (const { collection, indexes } of freshIndexes(before, next))
    await rebuild(
      trx,
      'app_row_index_entries',
      { appId, collection, indexes },
      (row) => indexEntries(appId, collection, indexes, row.id, row.createdAt, row.data),
      (batch) => trx.insertInto('app_row_index_entries').values(batch).execute(),
    );
  for (const { collection, indexes } of claimedAfresh(before, next))
    await rebuild(
      trx,
      'app_row_uniques',
      { appId, collection, indexes },
      (row) =>
        indexes.flatMap((index) => {
          const key = claimKey(index, row.data);
          return key === null
            ? []
            : [{ app_id: appId, collection, index_name: index.name, key, row_id: row.id }];
        }),
      (batch) =>
        trx
          .insertInto('app_row_uniques')
          .values(batch)
          // uniqueConflicts found no shared key; a row written since keeps the claim it made
          .onConflict((oc) => oc.doNothing())
          .execute(),
    );
}
