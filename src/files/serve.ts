/**
 * `GET /_platform/files/<store>/<file_id>` on the app origin. Public stores serve to anyone;
 * private ones need an app-user session or a valid signed URL (tampered: 403, expired: 403,
 * neither: 401). Served so the browser never sniffs or runs it: nosniff, a sandboxing CSP, and
 * `attachment` unless the type is safe to show inline.
 */
import { requestUser } from '../app-auth/service.ts';
import type { Deps } from '../deps.ts';
import { errorBody } from '../errors.ts';
import { REQUEST_ID_HEADER } from '../http/base.ts';
import type { LiveApp, ReleaseView, RuntimeCaches } from '../runtime/live.ts';
import { etagOf, matchesIfNoneMatch } from '../lib/etag.ts';
import { storeSpec, verifySignature } from './service.ts';

const INLINE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'text/plain', 'application/pdf', 'audio/mpeg', 'video/mp4']);

export function contentDisposition(type: string, filename: string): string {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${INLINE.has(bare) ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export async function handleFile(deps: Deps, caches: RuntimeCaches, input: { req: Request; app: LiveApp; release: ReleaseView; store: string; fileId: string; requestId: string }): Promise<Response> {
  const { req, app, release, store, fileId, requestId } = input;
  const fail = (status: number, code: string, message: string) =>
    new Response(JSON.stringify(errorBody(code, message)), { status, headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId } });
  if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'method_not_allowed', 'Use GET.');
  const spec = storeSpec(release.manifest, store);
  if (!spec) return fail(404, 'not_found', 'Not found.');
  if (!spec.public) {
    const url = new URL(req.url);
    const sig = verifySignature(deps, app.appId, url.pathname, url.searchParams.get('expires'), url.searchParams.get('sig'));
    if (sig === 'invalid') return fail(403, 'forbidden', 'The signature of this URL is not valid.');
    if (sig === 'expired') return fail(403, 'forbidden', 'This URL has expired.');
    if (sig === 'missing') {
      const user = await requestUser(deps, app.appId, release, req);
      if (!user) return fail(401, 'unauthorized', 'This file needs a signed-in user or a signed URL.');
    }
  }
  const file = await deps.db.selectFrom('app_files').selectAll().where('app_id', '=', app.appId).where('store', '=', store).where('id', '=', fileId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!file) return fail(404, 'not_found', 'Not found.');
  const etag = etagOf(file.sha256);
  const headers: Record<string, string> = {
    'content-type': file.content_type,
    etag,
    'cache-control': spec.public ? 'public, max-age=3600' : 'private, no-store',
    'content-disposition': contentDisposition(file.content_type, file.filename),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "sandbox; default-src 'none'",
    [REQUEST_ID_HEADER]: requestId,
  };
  if (matchesIfNoneMatch(req.headers.get('if-none-match') ?? undefined, etag)) return new Response(null, { status: 304, headers });
  headers['content-length'] = String(file.size);
  if (req.method === 'HEAD') return new Response(null, { status: 200, headers });
  const bytes = await caches.bytes(app.accountId, { path: file.id, contentType: file.content_type, sha256: file.sha256, etag, size: Number(file.size), sizeText: String(file.size) });
  return new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers });
}
