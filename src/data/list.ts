/**
 * Listing a collection's rows for app code and the data browser: filters on declared fields (through
 * the unique indexes where one applies), pages bounded in rows and in bytes, cursors by id.
 */
import { sql, type AliasedSelectQueryBuilder, type RawBuilder } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { CollectionSpec } from '../manifest/resources.ts';
import {
  checkFields,
  collectionSpec,
  type DataTarget,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  type Row,
  toApi,
} from './service.ts';

/**
 * JSON one page of rows may come to. The main thread reads and serialises a page whole, and app
 * code holds it in its 64 MiB, so 1,000 rows of up to 1 MiB each (a gigabyte) are not one answer.
 */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024;

/** `ctx.data...list()`: one answer holding every row asked for, or `payload_too_large` when they would pass MAX_PAGE_BYTES. */
export async function listRows(
  deps: Deps,
  target: DataTarget,
  collection: string,
  query: unknown,
): Promise<Record<string, unknown>[]> {
  const { rows, cut } = await listRowsPage(deps, target, collection, query);
  if (cut)
    throw new ApiError(
      'payload_too_large',
      `These rows come to more than ${MAX_PAGE_BYTES / 1024 / 1024} MiB of JSON; ask for fewer (limit).`,
    );
  return rows;
}

/** `list({ where, limit })` checked: the limit, equality on fields (`match`) and the fields that must be missing. */
export function listQuery(
  spec: CollectionSpec,
  query: unknown,
): { limit: number; match: Record<string, unknown>; nullFields: string[] } {
  const opts = (query ?? {}) as { where?: unknown; limit?: unknown };
  if (typeof opts !== 'object' || opts === null)
    throw new ApiError('invalid_query', 'list() takes { where, limit }.');
  const limit = opts.limit === undefined ? DEFAULT_LIST_LIMIT : opts.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    throw new ApiError(
      'invalid_query',
      `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}.`,
    );
  const where = opts.where === undefined ? {} : checkFields(spec, opts.where);
  for (const k of Object.keys(where)) {
    if (spec.fields[k]!.type === 'json')
      throw new ApiError(
        'invalid_query',
        `where cannot compare json field "${k}"; filter on a scalar field.`,
      );
  }
  const nullFields = Object.entries(where)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  const match = Object.fromEntries(Object.entries(where).filter(([, v]) => v !== null));
  return { limit, match, nullFields };
}

/** A collection's live rows, as the list pages select them (`sv`: no sort value). */
export function liveRows(deps: Deps, target: DataTarget, name: string) {
  return deps.db
    .selectFrom('app_rows')
    .select(['id', 'data', 'created_at', 'updated_at', sql<unknown>`null`.as('sv')])
    .where('app_id', '=', target.appId)
    .where('collection', '=', name)
    .where('deleted_at', 'is', null);
}

/**
 * A collection's live rows (`r`) through the entries (`e`) of one of its indexes, as the list
 * pages select them, with `sortValue` as `sv`.
 */
export function throughIndex(
  deps: Deps,
  target: DataTarget,
  name: string,
  indexName: string,
  sortValue: RawBuilder<unknown>,
) {
  return deps.db
    .selectFrom('app_row_index_entries as e')
    .innerJoin('app_rows as r', (j) =>
      j
        .onRef('r.app_id', '=', 'e.app_id')
        .onRef('r.collection', '=', 'e.collection')
        .onRef('r.id', '=', 'e.row_id'),
    )
    .select(['r.id', 'r.data', 'r.created_at', 'r.updated_at', sortValue.as('sv')])
    .where('e.app_id', '=', target.appId)
    .where('e.collection', '=', name)
    .where('e.index_name', '=', indexName)
    .where('r.deleted_at', 'is', null);
}

/**
 * Equality on declared fields, oldest first by (created_at, id); `limit` 1..1000, default 100.
 * The rows that fit in MAX_PAGE_BYTES, at least one: `cut` when some asked for were left for the
 * next page. Postgres measures and drops them, so they never reach this process.
 */
export async function listRowsPage(
  deps: Deps,
  target: DataTarget,
  collection: string,
  query: unknown,
  page: { after?: { at: Date; id: string }; newestFirst?: boolean } = {},
): Promise<{ rows: Record<string, unknown>[]; cut: boolean }> {
  const dir = page.newestFirst ? 'desc' : 'asc';
  const past = page.newestFirst ? sql.raw('<') : sql.raw('>');
  const { name, spec } = collectionSpec(target, collection);
  const { limit, match, nullFields } = listQuery(spec, query);
  // A declared index whose fields the filter fixes: the widest one wins.
  const index = spec.indexes
    .filter((i) => i.fields.every((f) => Object.hasOwn(match, f)))
    .sort((a, b) => b.fields.length - a.fields.length)[0];
  if (index) {
    const rest = Object.fromEntries(
      Object.entries(match).filter(([k]) => !index.fields.includes(k)),
    );
    let q = throughIndex(deps, target, name, index.name, sql<unknown>`null`).where(
      'e.key',
      '=',
      JSON.stringify(index.fields.map((f) => match[f])),
    );
    if (Object.keys(rest).length)
      q = q.where(sql<boolean>`r.data @> ${JSON.stringify(rest)}::jsonb`);
    for (const f of nullFields) q = q.where(sql<boolean>`r.data->${f} is null`);
    if (target.onlyOwnerId) q = q.where('r.owner_user_id', '=', target.onlyOwnerId);
    if (page.after)
      q = q.where(
        sql<boolean>`(e.created_at, e.row_id) ${past} (${page.after.at}::timestamptz, ${page.after.id})`,
      );
    return withinBudget(
      deps,
      q.orderBy('e.created_at', dir).orderBy('e.row_id', dir).limit(limit),
      dir,
    );
  }
  let q = liveRows(deps, target, name);
  if (Object.keys(match).length) {
    // Unindexed fields: containment (the GIN index app_rows_match_idx can serve it), in list order.
    q = q.where(
      sql<boolean>`app_row_doc(app_id, collection, data) @> ${JSON.stringify({ $a: target.appId, $c: name, ...match })}::jsonb`,
    );
  }
  for (const f of nullFields) q = q.where(sql<boolean>`data->${f} is null`);
  if (target.onlyOwnerId) q = q.where('owner_user_id', '=', target.onlyOwnerId);
  if (page.after)
    q = q.where(
      sql<boolean>`(created_at, id) ${past} (${page.after.at}::timestamptz, ${page.after.id})`,
    );
  return withinBudget(deps, q.orderBy('created_at', dir).orderBy('id', dir).limit(limit), dir);
}

/**
 * The page `inner` selects (ordered and limited), its rows' data sent only while their running size
 * stays within MAX_PAGE_BYTES (the first row always). `sorted`: `inner` also selects `sv`, the sort
 * value, and is ordered by it first (src/data/sorted.ts).
 */
export async function withinBudget(
  deps: Deps,
  inner: { as(alias: 'p'): AliasedSelectQueryBuilder<Row & { sv: unknown }, 'p'> },
  dir: 'asc' | 'desc' = 'asc',
  sorted = false,
): Promise<{ rows: Record<string, unknown>[]; cut: boolean }> {
  const order = sql.raw(
    `order by ${sorted ? `p.sv ${dir}, ` : ''}p.created_at ${dir}, p.id ${dir}`,
  );
  const upTo = sql<number>`sum(octet_length(p.data::text)) over (${order})`;
  let q = deps.db
    .selectFrom(inner.as('p'))
    .select([
      'p.id',
      'p.created_at',
      'p.updated_at',
      sql<
        Row['data'] | null
      >`case when ${upTo} <= ${MAX_PAGE_BYTES} or row_number() over (${order}) = 1 then p.data end`.as(
        'data',
      ),
    ]);
  if (sorted) q = q.orderBy('p.sv', dir);
  const sized = await q.orderBy('p.created_at', dir).orderBy('p.id', dir).execute();
  const rows: Record<string, unknown>[] = [];
  for (const r of sized) {
    if (r.data === null) return { rows, cut: true };
    rows.push(toApi(r as Row));
  }
  return { rows, cut: false };
}
