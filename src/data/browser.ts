/**
 * Browser access to app data on the app origin, under each collection's declared rules:
 *   GET  /_platform/data/<collection>?<field>=<value>…&limit=&cursor=   list (read rule)
 *   POST /_platform/data/<collection>                                 create (write rule)
 *   GET | PATCH | DELETE /_platform/data/<collection>/<id>            read / write rules
 * Rules: server_only (404: browsers do not see the collection), public, authenticated (401 without
 * a session), owner (a session; only rows that user created exist for them), role:<name> (403
 * without the role). A row a caller may not see is not found.
 */
import { requestUser, type AppUser } from '../app-auth/service.ts';
import type { Deps } from '../deps.ts';
import { ApiError, errorBody } from '../errors.ts';
import { REQUEST_ID_HEADER } from '../http/base.ts';
import { readBodyLimited } from '../http/validate.ts';
import { refuseMutation } from '../runtime/same-origin.ts';
import { lookupId } from '../lib/text.ts';
import type { ReleaseView } from '../runtime/live.ts';
import { createRow, declaredCollection, deleteRow, getRow, listRows, updateRow, type DataTarget } from './service.ts';

const BROWSER_MAX_LIMIT = 100;
const BROWSER_DEFAULT_LIMIT = 50;

type Decision = { ok: true; onlyOwner?: boolean } | { ok: false; status: number; code: string; message: string };

function decide(rule: string, user: AppUser | null): Decision {
  if (rule === 'public') return { ok: true };
  if (rule === 'server_only') return { ok: false, status: 404, code: 'not_found', message: 'Not found.' };
  if (!user) return { ok: false, status: 401, code: 'unauthorized', message: 'Sign in first.' };
  if (rule === 'authenticated') return { ok: true };
  if (rule === 'owner') return { ok: true, onlyOwner: true };
  if (rule.startsWith('role:')) return user.roles.includes(rule.slice(5)) ? { ok: true } : { ok: false, status: 403, code: 'forbidden', message: `This needs the role ${rule.slice(5)}.` };
  return { ok: false, status: 404, code: 'not_found', message: 'Not found.' };
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

export async function handleData(deps: Deps, input: { req: Request; appId: string; release: ReleaseView; segments: string[]; requestId: string }): Promise<Response> {
  const { req, appId, release, requestId } = input;
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-store', [REQUEST_ID_HEADER]: requestId };
  const send = (status: number, body: unknown) => new Response(body === null ? null : JSON.stringify(body), { status, headers });
  const fail = (status: number, code: string, message: string, details?: Record<string, unknown>) => send(status, errorBody(code, message, details));
  const [collection, id, extra] = input.segments;
  const spec = collection ? declaredCollection(release.manifest, collection) : undefined;
  if (!spec || extra !== undefined) return fail(404, 'not_found', 'Not found.');

  const writing = req.method !== 'GET' && req.method !== 'HEAD';
  const user = await requestUser(deps, appId, release, req);
  const decision = decide(writing ? spec.access.write : spec.access.read, user);
  if (!decision.ok) return fail(decision.status, decision.code, decision.message);
  const refused = writing ? refuseMutation(req, { body: req.method === 'POST' || req.method === 'PATCH' }) : null;
  if (refused) return fail(refused.status, refused.code, refused.message);
  const target: DataTarget = { appId, manifest: release.manifest, actorUserId: user?.id ?? null, onlyOwnerId: decision.onlyOwner ? user!.id : undefined };

  const readBody = async () => {
    const bytes = await readBodyLimited(req, 1024 * 1024, () => new ApiError('payload_too_large', 'Body too large.'));
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  };
  try {
    if (id === undefined) {
      if (req.method === 'GET') {
        const url = new URL(req.url);
        const where: Record<string, unknown> = {};
        let limit = BROWSER_DEFAULT_LIMIT;
        let after: { at: Date; id: string } | undefined;
        for (const [k, v] of url.searchParams) {
          if (k === 'limit') {
            limit = Number(v);
            if (!Number.isInteger(limit) || limit < 1 || limit > BROWSER_MAX_LIMIT) return fail(400, 'invalid_request', `limit must be 1 to ${BROWSER_MAX_LIMIT}.`);
          } else if (k === 'cursor') {
            after = decodeCursor(v);
            if (!after) return fail(400, 'invalid_request', 'cursor must be one this endpoint returned.');
          } else if (spec.fields[k]) where[k] = coerce(spec.fields[k]!.type, v);
          else return fail(400, 'invalid_request', `Unknown filter "${k}".`, { fields: { [k]: ['is not a declared field'] } });
        }
        const rows = await listRows(deps, target, collection!, { where, limit: limit + 1 }, { after });
        const page = rows.slice(0, limit);
        return send(200, { rows: page, cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null });
      }
      if (req.method === 'POST') return send(201, await createRow(deps, target, collection!, await readBody()));
      return fail(405, 'method_not_allowed', 'Use GET or POST.');
    }
    if (req.method === 'GET') {
      const row = await getRow(deps, target, collection!, lookupId(id));
      return row ? send(200, row) : fail(404, 'not_found', 'Not found.');
    }
    if (req.method === 'PATCH') return send(200, await updateRow(deps, target, collection!, lookupId(id), await readBody()));
    if (req.method === 'DELETE') {
      const r = await deleteRow(deps, target, collection!, lookupId(id));
      return r.deleted ? send(200, { deleted: true }) : fail(404, 'not_found', 'Not found.');
    }
    return fail(405, 'method_not_allowed', 'Use GET, PATCH or DELETE.');
  } catch (err) {
    if (err instanceof SyntaxError) return fail(400, 'invalid_json', 'Request body is not valid JSON.');
    if (err instanceof ApiError) {
      // a row the caller may not see and a row that does not exist look the same
      if (err.code === 'not_found') return fail(404, 'not_found', 'Not found.');
      return fail(err.status, err.code, err.message);
    }
    throw err;
  }
}
