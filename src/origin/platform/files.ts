/**
 * `GET /_platform/files/<store>/<file_id>` on the app origin. Public stores serve to anyone;
 * private ones need an app-user session or a valid signed URL (tampered: 403, expired: 403,
 * neither: 401). Served so the browser never sniffs or runs it: nosniff, a sandboxing CSP, and
 * `attachment` unless the type is safe to show inline.
 */
import { Hono } from 'hono';
import { requestUser } from '../../app-auth/service.ts';
import { liveFile } from '../../files/queries.ts';
import { storeSpec, verifySignature } from '../../files/service.ts';
import { ApiError } from '../../errors.ts';
import { REQUEST_ID_HEADER } from '../../http/request-id.ts';
import { etagOf, matchesIfNoneMatch } from '../../lib/etag.ts';
import { notAllowed } from './body.ts';
import { compressAnswer } from '../compress-answer.ts';
import type { OriginEnv } from './env.ts';

const INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'text/plain',
  'application/pdf',
  'audio/mpeg',
  'video/mp4',
]);

/** `download`: `?download=1` asks for a download whatever the type (the console's Download button). */
export function contentDisposition(type: string, filename: string, download = false): string {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${INLINE.has(bare) && !download ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export const fileRoutes = new Hono<OriginEnv>({ strict: true })
  .get('/:store/:file_id', async (c) => {
    const { deps, caches, app, release } = c.env;
    const req = c.req.raw;
    const store = c.req.param('store');
    const spec = storeSpec(release.manifest, store);
    if (!spec) throw new ApiError('not_found', 'Not found.');
    if (!spec.public) {
      const url = new URL(req.url);
      const sig = verifySignature(
        deps,
        app.appId,
        url.pathname,
        url.searchParams.get('expires'),
        url.searchParams.get('sig'),
      );
      if (sig === 'invalid')
        throw new ApiError('forbidden', 'The signature of this URL is not valid.');
      if (sig === 'expired') throw new ApiError('forbidden', 'This URL has expired.');
      if (sig === 'missing' && !(await requestUser(deps, app.appId, release, req)))
        throw new ApiError('unauthorized', 'This file needs a signed-in user or a signed URL.');
    }
    const file = await liveFile(deps.db, {
      appId: app.appId,
      store,
      fileId: c.req.param('file_id'),
    });
    if (!file) throw new ApiError('not_found', 'Not found.');
    const etag = etagOf(file.sha256);
    const headers: Record<string, string> = {
      'content-type': file.content_type,
      etag,
      'cache-control': spec.public ? 'public, max-age=3600' : 'private, no-store',
      'content-disposition': contentDisposition(
        file.content_type,
        file.filename,
        new URL(req.url).searchParams.get('download') === '1',
      ),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "sandbox; default-src 'none'",
      [REQUEST_ID_HEADER]: c.env.requestId,
    };
    if (matchesIfNoneMatch(req.headers.get('if-none-match') ?? undefined, etag))
      return new Response(null, { status: 304, headers });
    headers['content-length'] = String(file.size);
    if (req.method === 'HEAD') return new Response(null, { status: 200, headers });
    const body = await caches.body(app.accountId, {
      sha256: file.sha256,
      etag,
      size: Number(file.size),
    });
    // a large file from the object store streams through as it is (not compressed on the fly)
    if (body instanceof ReadableStream) return new Response(body, { status: 200, headers });
    return new Response((await compressAnswer(req, headers, body)) as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers,
    });
  })
  .all('/:store/:file_id', notAllowed('GET'));
