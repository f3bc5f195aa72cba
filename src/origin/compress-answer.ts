/**
 * On-the-fly compression of a server handler's buffered answer and of app store files: a
 * compressible type (the same list as static files), 1 KiB to 8 MiB, no `Content-Encoding` of the app's own and no `Cache-Control:
 * no-transform`, for a client that accepts brotli (quality 4, fast) or gzip (level 6). The work runs
 * on libuv's thread pool. A strong ETag from the app describes the uncompressed bytes, so it becomes
 * weak; `Vary: Accept-Encoding` is added to every answer that could have been compressed.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { compressible } from '../blobs/compress.ts';
import { acceptWeights } from './static.ts';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

type HeaderBag = Record<string, string> | Headers;
const get = (h: HeaderBag, n: string) => (h instanceof Headers ? h.get(n) : (h[n] ?? null));
const set = (h: HeaderBag, n: string, v: string) =>
  h instanceof Headers ? h.set(n, v) : (h[n] = v);
const drop = (h: HeaderBag, n: string) => (h instanceof Headers ? h.delete(n) : delete h[n]);

/** Larger answers go as they are: compressing them on every request would cost more than it saves. */
export const MAX_ON_THE_FLY_BYTES = 8 * 1024 * 1024;

export async function compressAnswer<P extends string | ArrayBuffer | Uint8Array>(
  req: Request,
  headers: HeaderBag,
  payload: P,
): Promise<P | Buffer> {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  const type = get(headers, 'content-type') ?? (typeof payload === 'string' ? 'text/plain' : '');
  if (
    size > MAX_ON_THE_FLY_BYTES ||
    !compressible(type, size) ||
    get(headers, 'content-encoding') !== null ||
    /(^|,)\s*no-transform\s*(,|$)/i.test(get(headers, 'cache-control') ?? '')
  )
    return payload;
  const vary = get(headers, 'vary');
  if (!vary || !/accept-encoding/i.test(vary))
    set(headers, 'vary', vary ? `${vary}, accept-encoding` : 'accept-encoding');
  const w = acceptWeights(req.headers.get('accept-encoding'));
  const encoding = w.br > 0 && w.br >= w.gzip ? 'br' : w.gzip > 0 ? 'gzip' : null;
  if (!encoding || (w.identityNamed && w.identity > Math.max(w.br, w.gzip))) return payload;
  const input =
    typeof payload === 'string'
      ? Buffer.from(payload)
      : payload instanceof Uint8Array
        ? payload
        : Buffer.from(payload);
  const out =
    encoding === 'br'
      ? await brotli(input, {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: input.length,
          },
        })
      : await gzip(input, { level: 6 });
  set(headers, 'content-encoding', encoding);
  drop(headers, 'content-length');
  const etag = get(headers, 'etag');
  if (etag && !etag.startsWith('W/')) set(headers, 'etag', `W/${etag}`);
  return out;
}
