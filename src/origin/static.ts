import { matchesIfNoneMatch } from '../lib/etag.ts';
import type { ReleaseFile } from '../releases/live.ts';

/**
 * Static files revalidate on every use (cheap 304s via the strong ETag) because release URLs are
 * not content-hashed. `no-cache` means exactly that: store, but ask before each reuse.
 */
export const STATIC_CACHE_CONTROL = 'no-cache';

/** The status serveFile() answers with: 304 when a 200 would repeat what the client has (If-None-Match). */
export function staticStatus(req: Request, file: ReleaseFile, status: number): number {
  if (status !== 200) return status;
  const inm = req.headers.get('if-none-match');
  return inm !== null && matchesIfNoneMatch(inm, file.etag) ? 304 : 200;
}

/**
 * A static response for GET or HEAD, honouring If-None-Match. `answered` is staticStatus() when the
 * caller has it already (reading `status` back off the Response costs more than working it out).
 */
export function serveFile(req: Request, file: ReleaseFile, bytes: Uint8Array | null, status: number, requestId: string, answered = staticStatus(req, file, status)): Response {
  // A plain header object set at construction keeps node-server on its fast path.
  if (answered === 304) {
    return new Response(null, { status: 304, headers: { etag: file.etag, 'cache-control': STATIC_CACHE_CONTROL, 'x-request-id': requestId } });
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
