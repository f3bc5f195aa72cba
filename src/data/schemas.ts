/** The data browser's records: one row of a collection, a page of rows, a deleted row. */
import * as v from 'valibot';
import { pageQuery } from '../http/paging.ts';
import { component } from '../openapi/components.ts';

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

export const RowsQuery = v.strictObject({
  ...pageQuery(decodeRowCursor),
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
