/**
 * What a release going live builds from the rows already stored: the entries of indexes the
 * release before it did not declare, and the claims of unique indexes it did not declare unique.
 * Rows written while a unique index was not declared hold no claim for it (a release that drops
 * the index is compatible, and its writes claim only its own indexes), so an index that comes back
 * is claimed afresh, and a release whose rows no longer fit it is refused (`uniqueConflicts`).
 */
import type { Tx } from '../db/database.ts';
import { type CollectionSpec, type ResourceState, resourceKey } from '../manifest/resources.ts';
import { rebuildIndexes } from './service.ts';

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

/** Each live row of a collection, 1,000 at a time, in id order. */
async function* liveRows(trx: Tx, appId: string, collection: string) {
  let after = '';
  for (;;) {
    const rows = await trx
      .selectFrom('app_rows')
      .select(['id', 'data'])
      .where('app_id', '=', appId)
      .where('collection', '=', collection)
      .where('deleted_at', 'is', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (!rows.length) return;
    for (const r of rows) yield { id: r.id, data: r.data as Record<string, unknown> };
    after = rows.at(-1)!.id;
  }
}

/**
 * Why `next` cannot go live over rows written while the live release (`before`) did not declare one
 * of its unique indexes: two rows that share a key. Empty when every such index fits the rows.
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
          `collection "${collection}" has rows that share values for unique index "${index.name}" (${index.fields.join(', ')}), written while the live release did not declare it: ${first} and ${row.id}`,
        );
        break;
      }
    }
  }
  return reasons;
}

/** Builds what `next` declares afresh over `before` from the rows, in the transaction that makes it live. */
export async function rebuildFromRows(
  trx: Tx,
  appId: string,
  before: ResourceState[],
  next: ResourceState[],
): Promise<void> {
  for (const { collection, indexes } of freshIndexes(before, next))
    await rebuildIndexes(trx, appId, collection, indexes);
  for (const { collection, indexes } of claimedAfresh(before, next)) {
    await trx
      .deleteFrom('app_row_uniques')
      .where('app_id', '=', appId)
      .where('collection', '=', collection)
      .where(
        'index_name',
        'in',
        indexes.map((i) => i.name),
      )
      .execute();
    let batch: { index_name: string; key: string; row_id: string }[] = [];
    const flush = async () => {
      if (!batch.length) return;
      await trx
        .insertInto('app_row_uniques')
        .values(batch.map((c) => ({ ...c, app_id: appId, collection })))
        // uniqueConflicts found no shared key; a row written since keeps the claim it made
        .onConflict((oc) => oc.doNothing())
        .execute();
      batch = [];
    };
    for await (const row of liveRows(trx, appId, collection)) {
      for (const index of indexes) {
        const key = claimKey(index, row.data);
        if (key !== null) batch.push({ index_name: index.name, key, row_id: row.id });
      }
      if (batch.length >= 1000) await flush();
    }
    await flush();
  }
}
