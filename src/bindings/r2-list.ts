/**
 * R2's `list`: keys in byte order after `cursor` or `startAfter`, those starting with `prefix`;
 * with a `delimiter`, the keys that have it past the prefix fold into `delimitedPrefixes` (each
 * counting one against `limit`, as R2 counts them). `httpMetadata` and `customMetadata` are empty
 * unless `include` names them.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { metaOf, type R2Meta, R2_LIMITS, type R2Target, r2Error } from './r2.ts';

export type R2Listed = {
  objects: R2Meta[];
  truncated: boolean;
  cursor?: string;
  delimitedPrefixes: string[];
};

const CURSOR = 'r1.';
/** A byte no UTF-8 text holds: a position past every key that starts with what precedes it. */
const PAST = Buffer.from([0xff]);

export async function r2List(
  deps: Deps,
  target: R2Target,
  bucket: string,
  options: {
    prefix?: unknown;
    delimiter?: unknown;
    cursor?: unknown;
    startAfter?: unknown;
    limit?: unknown;
    include?: unknown;
  },
): Promise<R2Listed> {
  const limit =
    options.limit === undefined || options.limit === null
      ? R2_LIMITS.listKeys
      : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > R2_LIMITS.listKeys)
    throw r2Error('list', 'MaxKeys params must be positive integer <= 1000.', 10022);
  const prefix = Buffer.from(typeof options.prefix === 'string' ? options.prefix : '', 'utf8');
  const delimiter =
    typeof options.delimiter === 'string' && options.delimiter !== ''
      ? Buffer.from(options.delimiter, 'utf8')
      : undefined;
  const include = Array.isArray(options.include) ? options.include : [];
  let after: Buffer | undefined;
  if (typeof options.cursor === 'string' && options.cursor.startsWith(CURSOR))
    after = Buffer.from(options.cursor.slice(CURSOR.length), 'base64url');
  else if (typeof options.startAfter === 'string') after = Buffer.from(options.startAfter, 'utf8');
  const objects: R2Meta[] = [];
  const prefixes: string[] = [];
  let position = after;
  let more = false;
  scan: for (;;) {
    let q = deps.db
      .selectFrom('r2_objects')
      .selectAll()
      .where('app_id', '=', target.appId)
      .where('bucket', '=', bucket)
      .orderBy('key')
      .limit(limit + 1);
    if (prefix.length)
      q = q
        .where('key', '>=', prefix)
        .where(sql<boolean>`substring(key from 1 for ${prefix.length}) = ${prefix}`);
    if (position) q = q.where('key', '>', position);
    const rows = await q.execute();
    if (!rows.length) break;
    for (const r of rows) {
      if (objects.length + prefixes.length >= limit) {
        more = true;
        break scan;
      }
      const rest = r.key.subarray(prefix.length);
      const at = delimiter ? rest.indexOf(delimiter) : -1;
      if (delimiter && at >= 0) {
        const folded = Buffer.concat([prefix, rest.subarray(0, at + delimiter.length)]);
        prefixes.push(folded.toString('utf8'));
        position = Buffer.concat([folded, PAST]);
        continue scan;
      }
      const meta = metaOf(r);
      objects.push({
        ...meta,
        httpMetadata: include.includes('httpMetadata') ? meta.httpMetadata : {},
        customMetadata: include.includes('customMetadata') ? meta.customMetadata : {},
      });
      position = r.key;
    }
    if (rows.length <= limit) break;
  }
  return {
    objects,
    truncated: more,
    ...(more && position ? { cursor: CURSOR + position.toString('base64url') } : {}),
    delimitedPrefixes: prefixes,
  };
}
