/**
 * Netlify Blobs (`getStore(name)` from `@netlify/blobs`, bundled as src/cli/node-compat/netlify-blobs.js)
 * over the same object store as R2: a store is the bucket `netlify:<name>` of the app, a blob an
 * object whose custom metadata holds the blob's JSON metadata, its etag the quoted MD5 of its
 * bytes (an HTTP etag, as Netlify gives it). `onlyIfMatch` and `onlyIfNew` are R2's conditions.
 */
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { HostBytes } from '../sandbox/host-bytes.ts';
import { type R2Meta, r2Delete, r2Get, r2Put, type R2Target } from './r2.ts';
import { r2List } from './r2-list.ts';
import { readPieces } from './r2-bytes.ts';

const bucketOf = (store: unknown): string => {
  if (typeof store !== 'string' || !store || store.length > 80 || store.includes('/'))
    throw new ApiError('invalid_request', 'Store name must not contain forward slashes (/).');
  return `netlify:${store}`;
};

const blobMeta = (m: R2Meta) => {
  let metadata: unknown = {};
  try {
    metadata = JSON.parse(m.customMetadata.netlify ?? '{}');
  } catch {}
  return { etag: `"${m.etag}"`, metadata, contentType: m.httpMetadata.contentType ?? null };
};

export async function blobsCall(
  deps: Deps,
  target: R2Target,
  method: string,
  args: unknown[],
  bytes: Buffer | undefined,
): Promise<unknown> {
  const bucket = bucketOf(args[0]);
  const opts = (args[2] && typeof args[2] === 'object' ? args[2] : {}) as Record<string, unknown>;
  switch (method) {
    case 'blobs.get': {
      const got = await r2Get(deps, target, bucket, args[1], { head: opts.head === true });
      if (!got) return null;
      if (!got.pieces) return { meta: blobMeta(got.meta) };
      // the package answers a blob whole; its size is bounded by what one call may carry
      const bytes = await readPieces(deps, target.accountId, got.pieces, 0, got.meta.size);
      return new HostBytes(blobMeta(got.meta), bytes);
    }
    case 'blobs.set': {
      const match =
        typeof opts.onlyIfMatch === 'string' ? opts.onlyIfMatch.replace(/^"|"$/g, '') : undefined;
      const meta = await r2Put(deps, target, bucket, args[1], bytes ?? Buffer.alloc(0), {
        customMetadata: { netlify: JSON.stringify(opts.metadata ?? {}) },
        ...(match !== undefined
          ? { onlyIf: { etagMatches: [{ type: 'strong' as const, value: match }] } }
          : opts.onlyIfNew === true
            ? { onlyIf: { etagDoesNotMatch: [{ type: 'wildcard' as const }] } }
            : {}),
      });
      return meta ? { etag: `"${meta.etag}"` } : null;
    }
    case 'blobs.delete':
      return r2Delete(deps, target, bucket, args[1]);
    case 'blobs.list': {
      const page = await r2List(deps, target, bucket, {
        prefix:
          args[1] && typeof args[1] === 'object'
            ? (args[1] as { prefix?: unknown }).prefix
            : undefined,
        delimiter: (args[1] as { directories?: unknown } | undefined)?.directories
          ? '/'
          : undefined,
        cursor: (args[1] as { cursor?: unknown } | undefined)?.cursor,
      });
      return {
        blobs: page.objects.map((o) => ({ key: o.key, etag: `"${o.etag}"` })),
        // Netlify names a directory without its trailing slash
        directories: page.delimitedPrefixes.map((d) => d.replace(/\/$/, '')),
        ...(page.cursor ? { cursor: page.cursor } : {}),
      };
    }
    default:
      throw new ApiError('not_available', `${method} is not available`);
  }
}
