/**
 * The release's static files as a lookup: the file a request path names directly (the static fast
 * path), and `ctx.assets.fetch()` / Workers' `env.ASSETS.fetch()`, which give server code the same
 * files (an SPA's server answering a deep link with its index.html).
 */
import { ApiError } from '../errors.ts';
import type { ReleaseFile, ReleaseView, RuntimeCaches } from '../releases/live.ts';
import { decodeAppPath } from './paths.ts';

/**
 * The file a raw request path names directly (the file itself, or a directory's index.html when
 * the path ends in `/`), memoised per release: releases never change, so neither does the answer.
 * Redirects, reserved paths and fallbacks are left to the full router.
 */
export function directStaticFile(release: ReleaseView, pathname: string): ReleaseFile | null {
  let f = release.resolved.get(pathname);
  if (f !== undefined) return f;
  f = null;
  const path = decodeAppPath(pathname);
  const root = release.staticRoot;
  if (path && path.segments[0] !== '_platform' && root !== null) {
    const rel = path.segments.join('/');
    if (!rel) f = release.files.get(`${root}/index.html`) ?? null;
    else if (path.directory) f = release.files.get(`${root}/${rel}/index.html`) ?? null;
    else f = release.files.get(`${root}/${rel}`) ?? null;
  }
  if (release.resolved.size >= 1024) release.resolved.clear(); // bounded against path floods
  release.resolved.set(pathname, f);
  return f;
}

/** The largest file server code may read through ctx.assets (bigger ones are served as static files). */
export const MAX_ASSET_BYTES = 4 * 1024 * 1024;

const TEXT = /^(text\/|application\/(json|javascript|xml|manifest\+json)|image\/svg\+xml)/;

export type AssetAnswer = {
  status: number;
  headers: [string, string][];
  /** a text file's content (UTF-8), or null */
  text: string | null;
  /** another file's bytes in base64, or null */
  base64: string | null;
};

/** What `GET <path>` of the release's static files answers: the file, a directory's index.html, or 404. */
export async function readAsset(
  caches: Pick<RuntimeCaches, 'bytes'>,
  release: ReleaseView,
  accountId: string,
  pathname: unknown,
  method: unknown,
): Promise<AssetAnswer> {
  if (typeof pathname !== 'string' || !pathname.startsWith('/'))
    throw new ApiError('invalid_request', 'ctx.assets.fetch needs a URL or a request.');
  if (method !== 'GET' && method !== 'HEAD')
    return { status: 405, headers: [['allow', 'GET, HEAD']], text: null, base64: null };
  const path = decodeAppPath(pathname);
  const f =
    directStaticFile(release, pathname) ??
    (path && !path.directory && path.segments.length
      ? release.staticRoot === null
        ? null
        : (release.files.get(`${release.staticRoot}/${path.segments.join('/')}/index.html`) ?? null)
      : null);
  if (!f)
    return {
      status: 404,
      headers: [['content-type', 'text/plain;charset=UTF-8']],
      text: 'Not Found',
      base64: null,
    };
  const headers: [string, string][] = [
    ['content-type', f.contentType],
    ['etag', f.etag],
  ];
  if (method === 'HEAD') return { status: 200, headers, text: null, base64: null };
  if (f.size > MAX_ASSET_BYTES)
    throw new ApiError(
      'file_too_large',
      `${f.path} is ${f.size} bytes; server code reads static files of at most ${MAX_ASSET_BYTES} bytes (larger ones are served as they are).`,
    );
  const bytes = await caches.bytes(accountId, f);
  return TEXT.test(f.contentType)
    ? { status: 200, headers, text: bytes.toString('utf8'), base64: null }
    : { status: 200, headers, text: null, base64: bytes.toString('base64') };
}

export type { ReleaseFile };
