/**
 * Named prepared statements for the few queries on the app origin's cold path (a request to an
 * app this node has not served lately: its live release, files, secrets and server sources).
 * Postgres plans an unnamed statement on every execution; for these small indexed reads planning
 * is most of the time (the figures are in the commit that made it). A query marks itself with `hot()` and runs through Kysely as usual;
 * each pool connection prepares it the first time it runs there (`usePreparedStatements`).
 *
 * Only fixed-shape queries may be marked (no `in (...)` lists that vary in length), so each
 * connection holds a handful of statements. Postgres re-plans them by itself after a schema change.
 */
import type { CompiledQuery, QueryResult } from 'kysely';
import type pg from 'pg';

const names = new Map<string, string>();

/** Marks a compiled query's SQL text to run as a named prepared statement; returns the query. */
export function hot<Q extends CompiledQuery>(query: Q): Q {
  if (!names.has(query.sql)) names.set(query.sql, `hot_${names.size + 1}`);
  return query;
}

/** Runs a Kysely query (built as usual) as a named prepared statement; its rows. */
export async function hotRows<O>(
  db: { executeQuery<R>(q: CompiledQuery<R>): Promise<QueryResult<R>> },
  builder: { compile(): CompiledQuery<O> },
): Promise<O[]> {
  return (await db.executeQuery(hot(builder.compile()))).rows;
}

type Query = (...args: unknown[]) => unknown;

/** Makes a pool connection run marked SQL texts as named statements (pg prepares each once per connection). */
export function usePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (
    text: unknown,
    values?: unknown,
    callback?: unknown,
  ) => {
    const name = typeof text === 'string' ? names.get(text) : undefined;
    if (name === undefined || typeof values === 'function') return query(text, values, callback);
    return query({ name, text, values }, callback);
  };
}
