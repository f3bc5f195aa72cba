/**
 * `/v0/apps/:app_id/data/:collection[/:row_id]`: an app's collections from the console, the CLI or a
 * script. Rows are read and written through the same functions as `ctx.data` (so validated exactly
 * as app code's writes are), against the live release's declarations; members with `data.read` read,
 * with `data.write` (owners, admins, developers) change rows, and every change is an event.
 */
import { Hono, type Context } from 'hono';
import { appAccess } from '../apps/access.ts';
import { releaseManifest } from '../releases/records.ts';
import { ApiError } from '../errors.ts';
import { listRowsSorted, type SortCursor, sortCursorAfter } from './sorted.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import { manifestOf } from '../manifest/stored.ts';
import { createRow, type DataTarget, deleteRow, getRow, updateRow } from './service.ts';
import { listRowsPage } from './list.ts';
import {
  DataRow,
  DataRowDeleted,
  DataRowPage,
  decodeRowCursor,
  decodeSortCursor,
  encodeRowCursor,
  encodeSortCursor,
  RowFields,
  RowsQuery,
} from './schemas.ts';

const tags = ['Data'];
const WRITE_ERRORS = [
  'collection_not_declared',
  'unknown_field',
  'reserved_field',
  'invalid_value',
  'reference_not_found',
  'row_too_large',
  'unique_violation',
  'quota_exceeded',
] as const;

const list = operation({
  operationId: 'listDataRows',
  summary: "A page of a collection's rows",
  description:
    '`where` is the JSON of `ctx.data...list({ where })`: equality on declared fields (`null` matches a missing field). `order` is `newest` (the default) or `oldest`, by creation. `sort=price` (or `-price`, descending) orders by a field an index starts with instead, in the order of its JSON value (numbers as numbers), rows without a value last; `invalid_query` for a field no index starts with. At most `limit` rows (default 50, most 100), fewer when they pass 8 MiB of JSON; `cursor` leads to the next page.',
  tags,
  responses: { 200: DataRowPage },
  errors: ['collection_not_declared', 'unknown_field', 'invalid_value', 'invalid_query'],
});
const read = operation({
  operationId: 'getDataRow',
  summary: 'One row',
  tags,
  responses: { 200: DataRow },
  errors: ['collection_not_declared'],
});
const create = operation({
  operationId: 'createDataRow',
  summary: 'Create a row, validated as `ctx.data` validates it',
  description: 'Recorded in the event log as `data.row_created`.',
  tags,
  responses: { 201: DataRow },
  errors: [...WRITE_ERRORS],
});
const update = operation({
  operationId: 'updateDataRow',
  summary: "Change a row's fields (`null` clears one)",
  description: 'Recorded in the event log as `data.row_updated`.',
  tags,
  responses: { 200: DataRow },
  errors: [...WRITE_ERRORS],
});
const remove = operation({
  operationId: 'deleteDataRow',
  summary: 'Delete a row',
  description:
    'As `ctx.data` deletes: the row is gone from every read at once. Recorded in the event log as `data.row_deleted`.',
  tags,
  responses: { 200: DataRowDeleted },
  errors: ['collection_not_declared'],
});

/** The app's live release's declarations, as `ctx.data` sees them. */
async function targetOf(c: Context<Env>): Promise<DataTarget> {
  const app = c.var.app;
  const manifest = app.live_release_id
    ? await releaseManifest(c.var.deps.db, app.live_release_id)
    : undefined;
  if (!manifest)
    throw new ApiError(
      'collection_not_declared',
      'This app has no live release, so it declares no collections: publish one first.',
    );
  return {
    appId: app.id,
    accountId: app.account_id,
    releaseId: app.live_release_id!,
    manifest: manifestOf(manifest),
  };
}

async function recordChange(
  c: Context<Env>,
  type: 'data.row_created' | 'data.row_updated' | 'data.row_deleted',
  collection: string,
  rowId: string,
  fields?: string[],
) {
  const app = c.var.app;
  const verb = {
    'data.row_created': 'created',
    'data.row_updated': 'changed',
    'data.row_deleted': 'deleted',
  }[type];
  await recordEvents(c.var.deps.db, [
    {
      app_id: app.id,
      account_id: app.account_id,
      type,
      message: `Row ${rowId} of ${collection} was ${verb} by ${c.var.actor.email}.`,
      metadata: { collection, row_id: rowId, by: c.var.actor.email, ...(fields ? { fields } : {}) },
      api_key_id: c.var.actor.apiKeyId,
      request_id: c.var.requestId,
    },
  ]);
}

const notFound = (collection: string) => new ApiError('not_found', `No such row in ${collection}.`);

export function dataRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:app_id/data/:collection', list, appAccess('data.read'), query(RowsQuery), async (c) => {
    const q = queryOf(c, RowsQuery);
    const collection = c.req.param('collection');
    const limit = q.limit ?? 50;
    const args = { where: q.where ? JSON.parse(q.where) : undefined, limit: limit + 1 };
    const field = q.sort?.replace(/^-/, '');
    const cursorOf = field
      ? (row: Record<string, unknown>) => encodeSortCursor(sortCursorAfter(row, field))
      : encodeRowCursor;
    const after = q.cursor
      ? field
        ? decodeSortCursor(q.cursor)
        : decodeRowCursor(q.cursor)
      : undefined;
    if (q.cursor && !after)
      throw new ApiError('invalid_request', 'That cursor is from a list in another order.', {
        fields: { cursor: ['must be a cursor of a list in the same order'] },
      });
    const target = await targetOf(c);
    const { rows, cut } = field
      ? await listRowsSorted(c.var.deps, target, collection, args, {
          sort: field,
          desc: q.sort!.startsWith('-'),
          after: after as SortCursor | undefined,
        })
      : await listRowsPage(c.var.deps, target, collection, args, {
          after: after as { at: Date; id: string } | undefined,
          newestFirst: q.order !== 'oldest',
        });
    const page = rows.slice(0, limit);
    return list.reply(c, 200, {
      app_id: c.var.app.id,
      collection,
      rows: page as never,
      cursor: cut || rows.length > limit ? cursorOf(page.at(-1)!) : null,
    });
  });

  r.get('/:app_id/data/:collection/:row_id', read, appAccess('data.read'), async (c) => {
    const collection = c.req.param('collection');
    const row = await getRow(c.var.deps, await targetOf(c), collection, c.req.param('row_id'));
    if (!row) throw notFound(collection);
    return read.reply(c, 200, row as never);
  });

  r.post(
    '/:app_id/data/:collection',
    create,
    appAccess('data.write'),
    jsonBody(RowFields),
    async (c) => {
      const collection = c.req.param('collection');
      const row = await createRow(c.var.deps, await targetOf(c), collection, bodyOf(c, RowFields));
      await recordChange(c, 'data.row_created', collection, String(row.id));
      return create.reply(c, 201, row as never);
    },
  );

  r.patch(
    '/:app_id/data/:collection/:row_id',
    update,
    appAccess('data.write'),
    jsonBody(RowFields),
    async (c) => {
      const collection = c.req.param('collection');
      const fields = bodyOf(c, RowFields);
      const row = await updateRow(
        c.var.deps,
        await targetOf(c),
        collection,
        c.req.param('row_id'),
        fields,
      );
      await recordChange(c, 'data.row_updated', collection, String(row.id), Object.keys(fields));
      return update.reply(c, 200, row as never);
    },
  );

  r.delete('/:app_id/data/:collection/:row_id', remove, appAccess('data.write'), async (c) => {
    const collection = c.req.param('collection');
    const id = c.req.param('row_id');
    const { deleted } = await deleteRow(c.var.deps, await targetOf(c), collection, id);
    if (!deleted) throw notFound(collection);
    await recordChange(c, 'data.row_deleted', collection, id);
    return remove.reply(c, 200, { id, deleted: true });
  });

  return r;
}
