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
