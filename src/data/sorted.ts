/**
 * A collection's rows sorted by a field a declared index starts with (the data browser's column
 * sort): one ordered range scan of that index's entries. The order is Postgres's `jsonb` order of
 * the field's value (numbers as numbers, strings by the database's collation, false before true),
 * then creation; rows without a value are not in the index and follow, oldest first, so every row
 * is listed once. The cursor says which of the two parts it stopped in.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { collectionSpec, type DataTarget } from './service.ts';
import { listQuery, liveRows, throughIndex, withinBudget } from './list.ts';

export type SortCursor =
  | { part: 'value'; value: unknown; at: Date; id: string }
  | { part: 'missing'; at: Date; id: string };

/** Where a page ended: after this row (its sort value, or its lack of one, places it). */
export function sortCursorAfter(row: Record<string, unknown>, field: string): SortCursor {
  const at = new Date(String(row.created_at));
  const id = String(row.id);
  const value = row[field];
  return value === null || value === undefined
    ? { part: 'missing', at, id }
    : { part: 'value', value, at, id };
}

/** The index a sort by `field` reads: the narrowest one declared that starts with it. */
function sortIndex(spec: { indexes: { name: string; fields: string[] }[] }, field: string) {
  const index = spec.indexes
    .filter((i) => i.fields[0] === field)
    .sort((a, b) => a.fields.length - b.fields.length)[0];
  if (!index) {
    const sortable = [...new Set(spec.indexes.map((i) => i.fields[0]!))];
    throw new ApiError(
      'invalid_query',
      sortable.length
        ? `Rows can be sorted by a field an index starts with (${sortable.join(', ')}); "${field}" is not one.`
        : `Rows can be sorted by a field an index starts with, and this collection declares no index.`,
    );
  }
  return index;
}

/** The fields rows can be sorted by (the first field of each declared index). */
export function sortableFields(spec: { indexes: { fields: string[] }[] }): string[] {
  return [...new Set(spec.indexes.map((i) => i.fields[0]!))];
}

export async function listRowsSorted(
  deps: Deps,
  target: DataTarget,
  collection: string,
  query: unknown,
  page: { sort: string; desc: boolean; after?: SortCursor },
): Promise<{ rows: Record<string, unknown>[]; cut: boolean }> {
  const { name, spec } = collectionSpec(target, collection);
  const index = sortIndex(spec, page.sort);
  const { limit, match, nullFields } = listQuery(spec, query);
  const dir = page.desc ? 'desc' : 'asc';
  const past = sql.raw(page.desc ? '<' : '>');
  const value = sql<unknown>`(e.key::jsonb -> 0)`;
  const rows: Record<string, unknown>[] = [];

  if (page.after?.part !== 'missing' && !nullFields.includes(page.sort)) {
    let q = throughIndex(deps, target, name, index.name, value);
    if (Object.keys(match).length)
      q = q.where(sql<boolean>`r.data @> ${JSON.stringify(match)}::jsonb`);
    for (const f of nullFields) q = q.where(sql<boolean>`r.data->${f} is null`);
    if (target.onlyOwnerId) q = q.where('r.owner_user_id', '=', target.onlyOwnerId);
    const after = page.after;
    if (after?.part === 'value')
      q = q.where(
        sql<boolean>`(${value}, e.created_at, e.row_id) ${past} (${JSON.stringify(after.value)}::jsonb, ${after.at}::timestamptz, ${after.id})`,
      );
    const got = await withinBudget(
      deps,
      q.orderBy(value, dir).orderBy('e.created_at', dir).orderBy('e.row_id', dir).limit(limit),
      dir,
      true,
    );
    rows.push(...got.rows);
    if (got.cut || got.rows.length === limit) return { rows, cut: got.cut };
  }

  // then the rows without a value for the field, oldest first
  let q = liveRows(deps, target, name).where(sql<boolean>`data->${page.sort} is null`);
  if (Object.keys(match).length) q = q.where(sql<boolean>`data @> ${JSON.stringify(match)}::jsonb`);
  for (const f of nullFields) q = q.where(sql<boolean>`data->${f} is null`);
  if (target.onlyOwnerId) q = q.where('owner_user_id', '=', target.onlyOwnerId);
  if (page.after?.part === 'missing')
    q = q.where(sql<boolean>`(created_at, id) > (${page.after.at}::timestamptz, ${page.after.id})`);
  const got = await withinBudget(
    deps,
    q
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit - rows.length),
  );
  rows.push(...got.rows);
  return { rows, cut: got.cut };
}
