/**
 * Postgres `text` cannot hold U+0000: an id that contains it matches nothing, rather than failing
 * in the query. (Values with it are refused: `jsonProblem` in json.ts.)
 */

/** An id app code passed: a string that can be stored, else nothing to look up. */
export const lookupId = (id: unknown): string | undefined =>
  typeof id === 'string' && !id.includes('\0') ? id : undefined;
