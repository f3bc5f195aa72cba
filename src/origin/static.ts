import { matchesIfNoneMatch } from '../lib/etag.ts';
import type { ReleaseFile } from '../releases/live.ts';

/**
 * Static files revalidate on every use (cheap 304s via the strong ETag) because release URLs are
 * not content-hashed. `no-cache` means exactly that: store, but ask before each reuse.
 */
export const STATIC_CACHE_CONTROL = 'no-cache';

/** A static response for GET or HEAD, honouring If-None-Match. */
export function serveFile(req: Request, file: ReleaseFile, bytes: Uint8Array | null, status: number, requestId: string): Response {
  // A plain header object set at construction keeps node-server on its fast path.
  if (status === 200) {
    const inm = req.headers.get('if-none-match');
    if (inm !== null && matchesIfNoneMatch(inm, file.etag)) {
      return new Response(null, { status: 304, headers: { etag: file.etag, 'cache-control': STATIC_CACHE_CONTROL, 'x-request-id': requestId } });
    }
  }
  const headers: Record<string, string> = {
    'content-type': file.contentType,
    etag: file.etag,
    'cache-control': STATIC_CACHE_CONTROL,
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  };
  // With a body, the server adapter derives Content-Length from the bytes on its cheapest path.
  if (bytes === null || req.method === 'HEAD') {
    headers['content-length'] = file.sizeText;
    return new Response(null, { status, headers });
  }
  return new Response(bytes as Uint8Array<ArrayBuffer>, { status, headers });
}
