/**
 * The query of a list read a page at a time (`?cursor=&limit=`), as the event log and the API key
 * list take it: `limit` from 1 to 100, `cursor` one this endpoint gave (its own `decode` says).
 */
import * as v from 'valibot';

export function pageQuery(decode: (cursor: string) => unknown) {
  return {
    cursor: v.optional(
      v.pipe(
        v.string(),
        v.check((s) => decode(s) !== undefined, 'must be a cursor returned by this endpoint'),
      ),
    ),
    limit: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 100'),
        v.transform(Number),
        v.minValue(1, 'must be an integer from 1 to 100'),
        v.maxValue(100, 'must be an integer from 1 to 100'),
      ),
    ),
  };
}

const TIME_ID_CURSOR = /^[A-Za-z0-9_-]{1,300}$/;
const PG_TIMESTAMP = /^\d{4}-\d\d-\d\d[ T][\d:.]+([+-]\d\d(:?\d\d)?|Z)?$/;

/**
 * The cursor of a list paged newest first by `(created_at, id)`: the last row's `created_at` as
 * Postgres wrote it (`created_at::text`, microseconds kept, so no row is skipped or repeated) and
 * its id, as base64url JSON.
 */
export const timeIdCursor = {
  encode: (c: { at: string; id: string }) =>
    Buffer.from(JSON.stringify([c.at, c.id])).toString('base64url'),
  decode(cursor: string): { at: string; id: string } | undefined {
    if (!TIME_ID_CURSOR.test(cursor)) return undefined;
    try {
      const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
      if (typeof at === 'string' && PG_TIMESTAMP.test(at) && typeof id === 'string')
        return { at, id };
    } catch {}
    return undefined;
  },
};
