/**
 * `POST /v0/apps/:app_id/d1/:database/query`: SQL run on an app's D1 database by a member of its
 * team, as `wrangler d1 execute` runs it on Cloudflare (`platform d1 execute` sends it). Members who
 * may write the app's data (owners, admins, developers) run any statement the app could; the
 * authorizer, limits and time budget are the app's own (guard.ts). Each call is recorded as an event
 * naming who ran it. The database is the one the app's binding names by `database_name`.
 */
import { type Context, Hono } from 'hono';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { liveBindings } from '../bindings/overview.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { component } from '../openapi/components.ts';
import { d1Call, d1DatabaseExists, d1Export } from './d1.ts';

export const D1QueryBody = component(
  'D1QueryBody',
  v.strictObject({
    /** one or more statements, separated by `;` (as `wrangler d1 execute --command` takes them) */
    sql: v.pipe(v.string(), v.minLength(1), v.maxLength(1_000_000)),
    params: v.optional(v.array(v.union([v.string(), v.number(), v.boolean(), v.null()]))),
  }),
);
export const D1QueryResult = component(
  'D1QueryResult',
  v.strictObject({
    database: v.string(),
    results: v.array(
      v.strictObject({
        columns: v.array(v.string()),
        rows: v.array(v.array(v.unknown())),
        changes: v.number(),
        last_row_id: v.number(),
        duration: v.number(),
      }),
    ),
  }),
);

const query = operation({
  operationId: 'queryD1Database',
  summary: "Runs SQL on one of the app's D1 databases",
  description:
    "The statements run in order, each committing on its own, with the app's own limits (no ATTACH, no transaction statements, 500 ms of SQL a call). Parameters bind to a single statement's `?`s.",
  tags: ['Bindings'],
  responses: { 200: D1QueryResult },
});

/** exec()'s split: statements end at `;` outside quotes and comments. */
function statementsOf(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '-' && text[i + 1] === '-') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === ';') {
      const s = text.slice(start, i).trim();
      if (s && !/^(--[^\n]*\n?\s*)+$/.test(s)) out.push(s);
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last && !/^(--[^\n]*\n?\s*)+$/.test(last)) out.push(last);
  return out;
}

const exported = operation({
  operationId: 'exportD1Database',
  summary: "One of the app's D1 databases as SQL",
  description:
    'Its tables (CREATE and INSERT statements), then indexes, views and triggers, as `wrangler d1 export` writes them; `platform d1 execute --file` reads it back.',
  tags: ['Bindings'],
  responses: { 200: null },
  text: {
    contentType: 'application/sql',
    example: 'CREATE TABLE notes (id integer primary key, body text);',
  },
});

/** A database the live release binds, or one that holds the app's data: never a new name. */
async function knownDatabase(c: Context<Env>): Promise<string> {
  const database = c.req.param('database')!;
  const bound = Object.values((await liveBindings(c.var.deps, c.var.app)).d1).includes(database);
  if (!bound && !(await d1DatabaseExists(c.var.deps, c.var.app.id, database)))
    throw errors.notFound('D1 database');
  return database;
}

export function d1Routes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/:app_id/d1/:database/export', exported, appAccess('data.read'), async (c) => {
    const database = await knownDatabase(c);
    const text = await d1Export(c.var.deps, c.var.app.id, database);
    return c.body(text, 200, {
      'content-type': 'application/sql; charset=utf-8',
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(database + '.sql')}`,
    });
  });
  r.post(
    '/:app_id/d1/:database/query',
    query,
    appAccess('data.write'),
    jsonBody(D1QueryBody),
    async (c) => {
      const database = await knownDatabase(c);
      const body = bodyOf(c, D1QueryBody);
      const statements = statementsOf(body.sql);
      if (!statements.length) throw new ApiError('invalid_request', 'No SQL statements detected.');
      if (body.params?.length && statements.length > 1)
        throw new ApiError('invalid_request', 'Parameters bind to a single statement.');
      const answers = await d1Call(
        c.var.deps,
        c.var.app.id,
        database,
        statements.map((sql) => ({ sql, params: body.params ?? [] })),
        'exec',
      );
      await recordEvents(c.var.deps.db, [
        {
          app_id: c.var.app.id,
          account_id: c.var.app.account_id,
          type: 'd1.executed_by_member',
          message: `SQL was run on the D1 database ${database} by ${c.var.actor.email}.`,
          metadata: { database, statements: statements.length, by: c.var.actor.email },
          api_key_id: c.var.actor.apiKeyId,
          request_id: c.var.requestId,
        },
      ]);
      return query.reply(c, 200, {
        database,
        results: answers.map((a) => ({
          columns: a.columns,
          rows: a.rows,
          changes: a.meta.changes,
          last_row_id: a.meta.last_row_id,
          duration: a.meta.duration,
        })),
      });
    },
  );
  return r;
}
