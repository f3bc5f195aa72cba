/**
 * Browser access to app data on the app origin, under each collection's declared rules:
 *   GET  /_platform/data/<collection>?<field>=<value>…&limit=&cursor=   list (read rule)
 *   POST /_platform/data/<collection>                                 create (write rule)
 *   GET | PATCH | DELETE /_platform/data/<collection>/<id>            read / write rules
 * Rules: server_only (404: browsers do not see the collection), public, authenticated (401 without
 * a session), owner (a session; only rows that user created exist for them), role:<name> (403
 * without the role). A row a caller may not see is not found.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { requestUser, type AppUser } from '../../app-auth/service.ts';
import { createRow, declaredCollection, deleteRow, getRow, updateRow } from '../../data/service.ts';
import { listRowsPage } from '../../data/list.ts';
import { ApiError } from '../../errors.ts';
import { lookupId } from '../../lib/text.ts';
import { originError } from '../respond.ts';
import { notAllowed, readJson, sameOrigin, send } from './body.ts';
import type { OriginEnv } from './env.ts';

const BROWSER_MAX_LIMIT = 100;
const BROWSER_DEFAULT_LIMIT = 50;
const MAX_BODY = 1024 * 1024;

/** Whether `user` passes `rule`; `onlyOwner` narrows what they see to their own rows. Throws when not. */
function decide(rule: string, user: AppUser | null): { onlyOwner: boolean } {
  if (rule === 'public') return { onlyOwner: false };
  if (rule === 'server_only') throw new ApiError('not_found', 'Not found.');
  if (!user) throw new ApiError('unauthorized', 'Sign in first.');
  if (rule === 'authenticated') return { onlyOwner: false };
  if (rule === 'owner') return { onlyOwner: true };
  if (rule.startsWith('role:')) {
    if (user.roles.includes(rule.slice(5))) return { onlyOwner: false };
    throw new ApiError('forbidden', `This needs the role ${rule.slice(5)}.`);
  }
  throw new ApiError('not_found', 'Not found.');
}

function encodeCursor(row: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}
function decodeCursor(c: string): { at: Date; id: string } | undefined {
  try {
    const [at, id] = JSON.parse(Buffer.from(c, 'base64url').toString()) as [string, string];
    const d = new Date(at);
    return typeof id === 'string' && !Number.isNaN(d.getTime()) ? { at: d, id } : undefined;
  } catch {
    return undefined;
  }
}

/** Query-string values are text: coerce them to the declared type so `?done=false&n=3` compare as JSON would. */
function coerce(type: string, value: string): unknown {
  if (value === 'null') return null;
  if (type === 'integer' || type === 'number') return value.trim() === '' ? value : Number(value);
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

/** Loads the declared collection and applies its read or write rule (and the same-origin check for writes). */
const collectionAccess: MiddlewareHandler<OriginEnv> = async (c, next) => {
  const { deps, app, release } = c.env;
  const name = c.req.param('collection') ?? '';
  const spec = declaredCollection(release.manifest, name);
  if (!spec) throw new ApiError('not_found', 'Not found.');
  const method = c.req.method;
  const writing = method !== 'GET' && method !== 'HEAD';
  const user = await requestUser(deps, app.appId, release, c.req.raw);
  const { onlyOwner } = decide(writing ? spec.access.write : spec.access.read, user);
  if (writing) sameOrigin(c.req.raw);
  c.set('collection', {
    name,
    spec,
    user,
    target: {
      appId: app.appId,
      accountId: app.accountId,
      releaseId: release.releaseId,
      manifest: release.manifest,
      actorUserId: user?.id ?? null,
      onlyOwnerId: onlyOwner ? user!.id : undefined,
    },
  });
  await next();
};

/** `?field=value…&limit=&cursor=`: declared fields filter; anything else is refused by name. */
function listQuery(
  url: string,
  fields: Record<string, { type: string }>,
): { where: Record<string, unknown>; limit: number; after?: { at: Date; id: string } } {
  const where: Record<string, unknown> = {};
  let limit = BROWSER_DEFAULT_LIMIT;
  let after: { at: Date; id: string } | undefined;
  for (const [k, v] of new URL(url).searchParams) {
    if (k === 'limit') {
      limit = Number(v);
      if (!Number.isInteger(limit) || limit < 1 || limit > BROWSER_MAX_LIMIT)
        throw new ApiError('invalid_request', `limit must be 1 to ${BROWSER_MAX_LIMIT}.`);
    } else if (k === 'cursor') {
      after = decodeCursor(v);
      if (!after)
        throw new ApiError('invalid_request', 'cursor must be one this endpoint returned.');
    } else if (fields[k]) where[k] = coerce(fields[k]!.type, v);
    else
      throw new ApiError('invalid_request', `Unknown filter "${k}".`, {
        fields: { [k]: ['is not a declared field'] },
      });
  }
  return { where, limit, after };
}

export const dataRoutes = new Hono<OriginEnv>({ strict: true });
for (const path of ['/:collection', '/:collection/']) {
  dataRoutes
    .use(path, collectionAccess)
    .get(path, async (c) => {
      const { name, spec, target } = c.var.collection;
      const { where, limit, after } = listQuery(c.req.url, spec.fields);
      // one row more than asked tells whether there are more; a page cut at MAX_PAGE_BYTES has more too
      const { rows, cut } = await listRowsPage(
        c.env.deps,
        target,
        name,
        { where, limit: limit + 1 },
        { after },
      );
      const page = rows.slice(0, limit);
      return send(c, 200, {
        rows: page,
        cursor: cut || rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
      });
    })
    .post(path, async (c) => {
      const { name, target } = c.var.collection;
      return send(
        c,
        201,
        await createRow(c.env.deps, target, name, await readJson(c.req.raw, MAX_BODY)),
      );
    })
    .all(path, notAllowed('GET', 'POST'));
}
for (const path of ['/:collection/:id', '/:collection/:id/']) {
  dataRoutes
    .use(path, collectionAccess)
    .get(path, async (c) => {
      const { name, target } = c.var.collection;
      const row = await getRow(c.env.deps, target, name, lookupId(c.req.param('id')));
      if (!row) throw new ApiError('not_found', 'Not found.');
      return send(c, 200, row);
    })
    .patch(path, async (c) => {
      const { name, target } = c.var.collection;
      return send(
        c,
        200,
        await updateRow(
          c.env.deps,
          target,
          name,
          lookupId(c.req.param('id')),
          await readJson(c.req.raw, MAX_BODY),
        ),
      );
    })
    .delete(path, async (c) => {
      const { name, target } = c.var.collection;
      const r = await deleteRow(c.env.deps, target, name, lookupId(c.req.param('id')));
      if (!r.deleted) throw new ApiError('not_found', 'Not found.');
      return send(c, 200, { deleted: true });
    })
    .all(path, notAllowed('GET', 'PATCH', 'DELETE'));
}
dataRoutes
  // a row the caller may not see and a row that does not exist look the same
  .onError((err, c) =>
    originError(
      c.env.deps,
      err instanceof ApiError && err.code === 'not_found'
        ? new ApiError('not_found', 'Not found.')
        : err,
      c.env.requestId,
      { extra: { 'cache-control': 'no-store' } },
    ),
  );
