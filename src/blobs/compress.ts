/**
 * Compressed variants of static files, made once per content at publish: brotli 11 and gzip 9 (6 and 6
 * for files over 256 KiB, see MAX_BEST_BYTES), through node:zlib's asynchronous
 * calls, which run on libuv's thread pool, off the main thread and in parallel. A variant is kept
 * only when it saves at least 5%. Which types are compressed: text, JSON, JavaScript, CSS, SVG,
 * XML, WebAssembly and a few more (docs/decisions/origin.md), from 1 KiB up.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

export type Encoding = 'br' | 'gzip';
export const MIN_COMPRESS_BYTES = 1024;
/**
 * Files up to this size get the best (brotli 11, gzip 9); larger ones brotli 6 and gzip 6, because the best
 * costs 0.2 to 0.4 s a 512 KiB file on one core here for a few percent (npm run bench:publish, the text rows).
 */
export const MAX_BEST_BYTES = 256 * 1024;
const COMPRESSIBLE =
  /^(text\/[\w.+-]+|application\/(json|[\w.+-]+\+json|javascript|ecmascript|x-javascript|xml|[\w.+-]+\+xml|wasm|manifest\+json|x-ndjson|graphql|x-yaml|yaml|toml)|image\/(svg\+xml|x-icon|vnd\.microsoft\.icon|bmp)|font\/(ttf|otf)|application\/(vnd\.ms-fontobject|x-font-ttf))(\s*;|$)/i;

/** Whether a file of this type and size is worth compressing. */
export function compressible(contentType: string, size: number): boolean {
  return size >= MIN_COMPRESS_BYTES && COMPRESSIBLE.test(contentType.trim());
}

export type Variant =
  | { encoding: Encoding; sha256: Buffer; bytes: Buffer }
  | { encoding: Encoding; sha256: null; bytes: null };

/** Both variants of one file; a variant that saves under 5% comes back with null bytes ("not worth it"). */
export async function compressVariants(bytes: Buffer): Promise<Variant[]> {
  const large = bytes.length > MAX_BEST_BYTES;
  const [br, gz] = await Promise.all([
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: large ? 6 : 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
    gzip(bytes, { level: large ? 6 : 9 }),
  ]);
  return [
    ['br', br],
    ['gzip', gz],
  ].map(([encoding, out]) => {
    const data = out as Buffer;
    return data.length <= bytes.length * 0.95
      ? {
          encoding: encoding as Encoding,
          sha256: createHash('sha256').update(data).digest(),
          bytes: data,
        }
      : { encoding: encoding as Encoding, sha256: null, bytes: null };
  });
}
