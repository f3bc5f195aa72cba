import type { ReleaseFile } from './live.ts';

/** Static files revalidate on every use (cheap 304s via the strong ETag) because release URLs are not content-hashed. */
export const STATIC_CACHE_CONTROL = 'public, max-age=0, must-revalidate';

/** RFC 9110 If-None-Match: `*` or a list of entity tags, compared weakly. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

export function staticHeaders(file: ReleaseFile): Record<string, string> {
  return {
    'content-type': file.contentType,
    etag: file.etag,
    'cache-control': STATIC_CACHE_CONTROL,
    'x-content-type-options': 'nosniff',
  };
}

/** A static response for GET or HEAD, honouring If-None-Match. */
export function serveFile(req: Request, file: ReleaseFile, bytes: Uint8Array | null, status = 200): Response {
  const headers = staticHeaders(file);
  if (status === 200 && matchesIfNoneMatch(req.headers.get('if-none-match') ?? undefined, file.etag)) {
    return new Response(null, { status: 304, headers: { etag: file.etag, 'cache-control': STATIC_CACHE_CONTROL } });
  }
  headers['content-length'] = String(file.size);
  return new Response(req.method === 'HEAD' ? null : (bytes as Uint8Array<ArrayBuffer> | null), { status, headers });
}
