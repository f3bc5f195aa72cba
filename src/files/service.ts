/**
 * File stores (`ctx.files.store(name)`): uploads from server code into a declared store, bytes in
 * the blob store (Postgres in v0, deduplicated per account), public URLs for public stores and
 * HMAC-signed, expiring URLs for private ones. The signing key is derived per app from the
 * platform's secrets key and never enters the sandbox.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { appOrigin } from '../apps/mappers.ts';
import { blobStore } from '../blobs/store.ts';
import type { Deps } from '../deps.ts';
import { recordEvents } from '../events/record.ts';
import { newId } from '../lib/ids.ts';
import { flattenResources } from '../manifest/resources.ts';
import type { Manifest } from '../manifest/schema.ts';
import { ContentType } from '../manifest/schema.ts';
import * as v from 'valibot';
import { lookupId } from '../lib/text.ts';
import { ApiError } from '../errors.ts';
import type { HostUpload } from '../sandbox/pool.ts';
import { storageQuota } from '../storage/quota.ts';

/** Without `max_file_size_bytes`, a store takes files up to 10 MiB (the request body bound of server code). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

export type StoreSpec = {
  public: boolean;
  max_file_size_bytes: number | null;
  allowed_content_types: string[] | null;
};
export type FilesTarget = {
  appId: string;
  accountId: string;
  releaseId: string;
  manifest: Manifest;
  requestId?: string | null;
};

export function storeSpec(manifest: Manifest, name: unknown): StoreSpec | undefined {
  if (typeof name !== 'string') return undefined;
  return flattenResources(manifest).find(
    (r) => r.resource_type === 'files' && r.resource_name === name,
  )?.spec as StoreSpec | undefined;
}

function requireStore(target: FilesTarget, name: unknown): { name: string; spec: StoreSpec } {
  const spec = storeSpec(target.manifest, name);
  if (!spec)
    throw new ApiError(
      'store_not_declared',
      `File store "${String(name)}" is not declared in this release's resources.files.`,
    );
  return { name: name as string, spec };
}

function signingKey(deps: Deps, appId: string): Buffer {
  return Buffer.from(
    hkdfSync(
      'sha256',
      deps.secretsKey,
      Buffer.from(appId),
      Buffer.from('platform file URLs v1'),
      32,
    ),
  );
}

export function signPath(deps: Deps, appId: string, path: string, expires: number): string {
  return createHmac('sha256', signingKey(deps, appId)).update(`${path}\n${expires}`).digest('hex');
}

export function verifySignature(
  deps: Deps,
  appId: string,
  path: string,
  expires: string | null,
  sig: string | null,
  now = Date.now(),
): 'ok' | 'missing' | 'invalid' | 'expired' {
  if (!expires || !sig) return 'missing';
  if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return 'invalid';
  const expected = Buffer.from(signPath(deps, appId, path, Number(expires)), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'invalid';
  return Number(expires) * 1000 < now ? 'expired' : 'ok';
}

type FileRecord = {
  file_id: string;
  store: string;
  filename: string;
  content_type: string;
  size: number;
  created_at: string;
};
const toRecord = (r: {
  id: string;
  store: string;
  filename: string;
  content_type: string;
  size: number;
  created_at: Date;
}): FileRecord => ({
  file_id: r.id,
  store: r.store,
  filename: r.filename,
  content_type: r.content_type,
  size: Number(r.size),
  created_at: r.created_at.toISOString(),
});

/** `store.createUpload(bytes, { filename, content_type })`; the bytes arrive hashed by the sandbox worker. */
export async function createUpload(
  deps: Deps,
  target: FilesTarget,
  store: unknown,
  upload: HostUpload | undefined,
  options: unknown,
): Promise<FileRecord> {
  const { name, spec } = requireStore(target, store);
  const opts = (options ?? {}) as { filename?: unknown; content_type?: unknown };
  if (!upload) throw new ApiError('invalid_file', 'The file contents must be bytes or a string.');
  const filename =
    typeof opts.filename === 'string' &&
    opts.filename.length >= 1 &&
    opts.filename.length <= 255 &&
    !/[\u0000-\u001f/\\]/.test(opts.filename)
      ? opts.filename
      : undefined;
  if (!filename)
    throw new ApiError(
      'invalid_file',
      'filename must be 1 to 255 characters, without slashes or control characters.',
    );
  const contentType =
    typeof opts.content_type === 'string' && v.safeParse(ContentType, opts.content_type).success
      ? opts.content_type
      : undefined;
  if (!contentType)
    throw new ApiError('invalid_file', 'content_type must be a media type such as image/png.');
  const { bytes, sha256 } = upload;
  const max = spec.max_file_size_bytes ?? DEFAULT_MAX_FILE_BYTES;
  if (bytes.length > max)
    throw new ApiError(
      'file_too_large',
      `The file is ${bytes.length} bytes; store "${name}" takes at most ${max}.`,
    );
  const bare = contentType.split(';')[0]!.trim().toLowerCase();
  if (
    spec.allowed_content_types &&
    !spec.allowed_content_types.some((t) => t.split(';')[0]!.trim().toLowerCase() === bare)
  ) {
    throw new ApiError(
      'content_type_not_allowed',
      `Store "${name}" accepts ${spec.allowed_content_types.join(', ')}; not ${bare}.`,
    );
  }
  const quota = storageQuota(deps);
  await quota.check(target.accountId, bytes.length);
  const record = await deps.db.transaction().execute(async (trx) => {
    await blobStore(deps.config).putMany(trx, target.accountId, [{ sha256, bytes }]);
    const row = await trx
      .insertInto('app_files')
      .values({
        id: newId('file'),
        app_id: target.appId,
        store: name,
        filename,
        content_type: contentType,
        size: bytes.length,
        sha256,
      })
      .returning(['id', 'store', 'filename', 'content_type', 'size', 'created_at'])
      .executeTakeFirstOrThrow();
    const record = toRecord(row);
    await recordEvents(trx, [
      {
        app_id: target.appId,
        account_id: target.accountId,
        release_id: target.releaseId,
        request_id: target.requestId ?? null,
        type: 'files.uploaded',
        message: `File ${filename} uploaded to ${name}.`,
        metadata: {
          store: name,
          file_id: record.file_id,
          size: record.size,
          content_type: contentType,
        },
      },
    ]);
    return record;
  });
  quota.added(target.accountId, bytes.length);
  return record;
}

export async function createSignedUrl(
  deps: Deps,
  target: FilesTarget,
  store: unknown,
  fileId: unknown,
  options: unknown,
): Promise<{ url: string; expires_at: string }> {
  const { name } = requireStore(target, store);
  const lookup = lookupId(fileId);
  const seconds = ((options ?? {}) as { expires_in_seconds?: unknown }).expires_in_seconds ?? 3600;
  if (
    typeof seconds !== 'number' ||
    !Number.isInteger(seconds) ||
    seconds < 1 ||
    seconds > MAX_SIGNED_URL_SECONDS
  ) {
    throw new ApiError(
      'invalid_request',
      `expires_in_seconds must be a whole number from 1 to ${MAX_SIGNED_URL_SECONDS}.`,
    );
  }
  const file =
    lookup !== undefined
      ? await deps.db
          .selectFrom('app_files')
          .select('id')
          .where('app_id', '=', target.appId)
          .where('store', '=', name)
          .where('id', '=', lookup)
          .where('deleted_at', 'is', null)
          .executeTakeFirst()
      : undefined;
  if (!file) throw new ApiError('not_found', `No file ${String(fileId)} in store "${name}".`);
  const path = `/_platform/files/${name}/${file.id}`;
  const expires = Math.floor(Date.now() / 1000) + seconds;
  return {
    url: `${appOrigin(deps.config, target.appId)}${path}?expires=${expires}&sig=${signPath(deps, target.appId, path, expires)}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

export async function deleteFile(
  deps: Deps,
  target: FilesTarget,
  store: unknown,
  fileId: unknown,
): Promise<{ deleted: boolean }> {
  const { name } = requireStore(target, store);
  const id = lookupId(fileId);
  if (id === undefined) return { deleted: false };
  const freed = await deps.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('app_files')
      .set({ deleted_at: new Date() })
      .where('app_id', '=', target.appId)
      .where('store', '=', name)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning('size')
      .executeTakeFirst();
    if (r) {
      await recordEvents(trx, [
        {
          app_id: target.appId,
          account_id: target.accountId,
          release_id: target.releaseId,
          request_id: target.requestId ?? null,
          type: 'files.deleted',
          severity: 'info',
          message: `File ${id} deleted from ${name}.`,
          metadata: { store: name, file_id: id },
        },
      ]);
    }
    return r && Number(r.size);
  });
  if (freed === undefined) return { deleted: false };
  storageQuota(deps).added(target.accountId, -freed);
  return { deleted: true };
}
