import { matchesIfNoneMatch } from '../lib/etag.ts';
import type { HeaderReads } from '../http/parsed-headers.ts';
import type { FileVariant, ReleaseFile } from '../releases/live.ts';

/**
 * Static files revalidate on every use (cheap 304s via the strong ETag) because release URLs are
 * not content-hashed. `no-cache` means exactly that: store, but ask before each reuse.
 */
export const STATIC_CACHE_CONTROL = 'no-cache';

/** What is sent for a file: the original, or one of its compressed variants (its own bytes and strong ETag). */
export type Representation = {
  file: ReleaseFile;
  variant: FileVariant | null;
  etag: string;
  sizeText: string;
  blob: { etag: string; sha256: Buffer; size: number };
};

/** `identity` counts against a variant only when the client names it (unnamed, it is merely acceptable: RFC 9110 12.5.3). */
type Weights = { br: number; gzip: number; identity: number; identityNamed: boolean };
const weights = new Map<string, Weights>();
/** A request without Accept-Encoding: the original only. */
const NO_ACCEPT: Weights = Object.freeze({ br: 0, gzip: 0, identity: 1, identityNamed: false });

/** RFC 9110 Accept-Encoding as q-values for br, gzip and identity (`*` covers the ones not named), memoised per header. */
export function acceptWeights(header: string | null): Weights {
  if (header === null) return NO_ACCEPT;
  let w = weights.get(header);
  if (w) return w;
  const named: Record<string, number> = {};
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (!coding) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    named[coding === 'x-gzip' ? 'gzip' : coding] = q;
  }
  const star = named['*'];
  const of = (c: string, fallback: number) => named[c] ?? star ?? fallback;
  w = {
    br: of('br', 0),
    gzip: of('gzip', 0),
    identity: named.identity ?? (star === 0 ? 0 : 1),
    identityNamed: named.identity !== undefined,
  };
  if (weights.size >= 256) weights.clear();
  weights.set(header, w);
  return w;
}

/**
 * The representation a request gets: the best variant its Accept-Encoding allows (brotli before gzip
 * at equal weight; the original instead only when the client names identity with a higher weight),
 * else the original; null when the client refuses everything there is (`identity;q=0` with no
 * acceptable variant: 406).
 */
export function representation(headers: HeaderReads, file: ReleaseFile): Representation | null {
  const original: Representation = {
    file,
    variant: null,
    etag: file.etag,
    sizeText: file.sizeText,
    blob: file,
  };
  const v = file.variants;
  if (!v) return original;
  const w = acceptWeights(headers.get('accept-encoding'));
  let best: FileVariant | null = null;
  let bestQ = 0;
  if (v.br && w.br > 0) (best = v.br), (bestQ = w.br);
  if (v.gzip && w.gzip > bestQ) (best = v.gzip), (bestQ = w.gzip);
  if (best && (!w.identityNamed || bestQ >= w.identity))
    return { file, variant: best, etag: best.etag, sizeText: best.sizeText, blob: best };
  if (w.identity > 0) return original;
  return best
    ? { file, variant: best, etag: best.etag, sizeText: best.sizeText, blob: best }
    : null;
}

/** The status serveFile() answers with: 304 when a 200 would repeat what the client has (If-None-Match). */
export function staticStatus(headers: HeaderReads, rep: Representation, status: number): number {
  if (status !== 200) return status;
  const inm = headers.get('if-none-match');
  return inm !== null && matchesIfNoneMatch(inm, rep.etag) ? 304 : 200;
}

/**
 * A static response for GET or HEAD, honouring If-None-Match: `answered` is staticStatus() (the
 * caller keeps it, since reading `status` back off the Response costs more than working it out).
 */
export function serveFile(
  req: Request,
  rep: Representation,
  bytes: Uint8Array | ReadableStream<Uint8Array> | null,
  status: number,
  requestId: string,
  answered: number,
): Response {
  // A plain header object set at construction keeps node-server on its fast path.
  const compressed = rep.file.variants !== undefined;
  if (answered === 304) {
    const headers: Record<string, string> = {
      etag: rep.etag,
      'cache-control': STATIC_CACHE_CONTROL,
      'x-request-id': requestId,
    };
    if (compressed) headers.vary = 'accept-encoding';
    return new Response(null, { status: 304, headers });
  }
  const headers: Record<string, string> = {
    'content-type': rep.file.contentType,
    etag: rep.etag,
    'cache-control': STATIC_CACHE_CONTROL,
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  };
  if (compressed) headers.vary = 'accept-encoding';
  if (rep.variant) headers['content-encoding'] = rep.variant.encoding;
  // With a body, the server adapter derives Content-Length from the bytes on its cheapest path.
  if (bytes === null || req.method === 'HEAD') {
    headers['content-length'] = rep.sizeText;
    return new Response(null, { status, headers });
  }
  // a large file streamed from the object store: its length is known from the record
  if (bytes instanceof ReadableStream) headers['content-length'] = rep.sizeText;
  return new Response(bytes as Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>, {
    status,
    headers,
  });
}
