/** The data browser's records: one row of a collection, a page of rows, a deleted row. */
import * as v from 'valibot';
import { pageQuery } from '../http/paging.ts';
import { component } from '../openapi/components.ts';
import type { SortCursor } from './sorted.ts';

/** `{ id, ...fields, created_at, updated_at }`, as `ctx.data` and `/_platform/data` give it. */
export const DataRow = component(
  'DataRow',
  v.objectWithRest({ id: v.string(), created_at: v.string(), updated_at: v.string() }, v.unknown()),
);
export const DataRowPage = component(
  'DataRowPage',
  v.strictObject({
    app_id: v.string(),
    collection: v.string(),
    rows: v.array(DataRow),
    cursor: v.nullable(v.string()),
  }),
);
export const DataRowDeleted = component(
  'DataRowDeleted',
  v.strictObject({ id: v.string(), deleted: v.literal(true) }),
);

const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;
export function decodeRowCursor(c: string): { at: Date; id: string } | undefined {
  if (!CURSOR.test(c)) return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(c, 'base64url').toString()) as [unknown, unknown];
    const when = typeof at === 'string' ? new Date(at) : undefined;
    if (when && !Number.isNaN(when.getTime()) && typeof id === 'string') return { at: when, id };
  } catch {}
  return undefined;
}
export const encodeRowCursor = (row: Record<string, unknown>) =>
  Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');

const SORTED_CURSOR = /^[A-Za-z0-9_-]{1,6000}$/;
/** The cursor of a sorted list (src/data/sorted.ts): `["v", value, at, id]` or `["m", at, id]`. */
export function decodeSortCursor(c: string): SortCursor | undefined {
  if (!SORTED_CURSOR.test(c)) return undefined;
  try {
    const parts = JSON.parse(Buffer.from(c, 'base64url').toString()) as unknown[];
    const [at, id] = parts[0] === 'v' ? parts.slice(2) : parts.slice(1);
    const when = typeof at === 'string' ? new Date(at) : undefined;
    if (!when || Number.isNaN(when.getTime()) || typeof id !== 'string') return undefined;
    if (parts[0] === 'm' && parts.length === 3) return { part: 'missing', at: when, id };
    if (parts[0] === 'v' && parts.length === 4 && parts[1] !== null)
      return { part: 'value', value: parts[1], at: when, id };
  } catch {}
  return undefined;
}
export function encodeSortCursor(c: SortCursor): string {
  const parts =
    c.part === 'value' ? ['v', c.value, c.at.toISOString(), c.id] : ['m', c.at.toISOString(), c.id];
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export const RowsQuery = v.strictObject({
  ...pageQuery((c) => decodeRowCursor(c) ?? decodeSortCursor(c)),
  /** `price` or `-price`: by a field an index starts with, ascending or (with `-`) descending */
  sort: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^-?[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be a field name, with - for descending'),
    ),
  ),
  /** the same `where` as `ctx.data...list({ where })`, as JSON: equality on declared fields */
  where: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(4000),
      v.check((s) => {
        try {
          const w = JSON.parse(s);
          return typeof w === 'object' && w !== null && !Array.isArray(w);
        } catch {
          return false;
        }
      }, 'must be a JSON object of field values, e.g. {"status":"open"}'),
    ),
  ),
  order: v.optional(v.picklist(['newest', 'oldest'], 'must be newest or oldest')),
});

/** A row's fields to create or change (validated against the collection as `ctx.data` does). */
export const RowFields = v.record(v.string(), v.unknown());
