/**
 * `/v0/apps/:app_id/files/:store[/:file_id]`: the file browser. Every member lists a store's files
 * and gets a short-lived signed URL to one (a private store's files are reachable no other way);
 * owners, admins and developers delete (as app code's `store.delete` does, an event naming who).
 */
import { Hono, type Context } from 'hono';
import { appAccess } from '../apps/access.ts';
import { releaseManifest } from '../releases/records.ts';
import { appOrigin } from '../apps/mappers.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { query, queryOf } from '../http/validate.ts';
import { manifestOf } from '../manifest/stored.ts';
import { listStoreFiles } from './queries.ts';
import { FilesQuery, SignedFileUrl, StoredFileDeleted, StoredFilePage } from './schemas.ts';
import { createSignedUrl, deleteFile, type FilesTarget, storeSpec } from './service.ts';
import { timeIdCursor } from '../http/paging.ts';

/** How long a console download or preview link lives. */
const BROWSER_URL_SECONDS = 300;
const tags = ['Files'];

const list = operation({
  operationId: 'listStoredFiles',
  summary: "A store's files, newest first, with who uploaded each",
  tags,
  responses: { 200: StoredFilePage },
  errors: ['store_not_declared'],
});
const sign = operation({
  operationId: 'signStoredFileUrl',
  summary: 'A download URL for one file, valid for 5 minutes',
  description:
    'Signed as `store.createSignedUrl` signs: it works for a private store too, for anyone holding it, until it expires.',
  tags,
  responses: { 200: SignedFileUrl },
  errors: ['store_not_declared'],
});
const remove = operation({
  operationId: 'deleteStoredFile',
  summary: 'Delete a file: it stops being served at once, and its bytes stop counting',
  tags,
  responses: { 200: StoredFileDeleted },
  errors: ['store_not_declared'],
});

async function targetOf(c: Context<Env>): Promise<FilesTarget> {
  const app = c.var.app;
  const manifest = app.live_release_id
    ? await releaseManifest(c.var.deps.db, app.live_release_id)
    : undefined;
  if (!manifest || !app.live_release_id)
    throw new ApiError(
      'store_not_declared',
      'This app has no live release, so it declares no file stores: publish one first.',
    );
  return {
    appId: app.id,
    accountId: app.account_id,
    releaseId: app.live_release_id,
    manifest: manifestOf(manifest),
    requestId: c.var.requestId,
  };
}

export function fileRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:app_id/files/:store', list, appAccess('data.read'), query(FilesQuery), async (c) => {
    const q = queryOf(c, FilesQuery);
    const target = await targetOf(c);
    const store = c.req.param('store');
    const spec = storeSpec(target.manifest, store);
    if (!spec)
      throw new ApiError(
        'store_not_declared',
        `File store "${store}" is not declared in the live release.`,
      );
    const limit = q.limit ?? 50;
    const rows = await listStoreFiles(
      c.var.deps.db,
      { appId: target.appId, store },
      { limit, after: q.cursor ? timeIdCursor.decode(q.cursor) : undefined },
    );
    const page = rows.slice(0, limit);
    const origin = appOrigin(c.var.deps.config, target.appId);
    const last = page.at(-1);
    return list.reply(c, 200, {
      app_id: target.appId,
      store,
      public: spec.public,
      files: page.map((f) => ({
        file_id: f.id,
        store: f.store,
        filename: f.filename,
        content_type: f.content_type,
        size: Number(f.size),
        created_at: f.created_at.toISOString(),
        owner_user_id: f.owner_user_id,
        owner_email: f.owner_email,
        public_url: spec.public
          ? `${origin}/_platform/files/${store}/${encodeURIComponent(f.id)}`
          : null,
      })),
      cursor:
        rows.length > limit && last
          ? timeIdCursor.encode({ at: last.created_key, id: last.id })
          : null,
    });
  });

  r.post('/:app_id/files/:store/:file_id/signed-url', sign, appAccess('data.read'), async (c) =>
    sign.reply(
      c,
      200,
      await createSignedUrl(
        c.var.deps,
        await targetOf(c),
        c.req.param('store'),
        c.req.param('file_id'),
        {
          expires_in_seconds: BROWSER_URL_SECONDS,
        },
      ),
    ),
  );

  r.delete('/:app_id/files/:store/:file_id', remove, appAccess('data.write'), async (c) => {
    const target = await targetOf(c);
    const store = c.req.param('store');
    const id = c.req.param('file_id');
    const { deleted } = await deleteFile(c.var.deps, target, store, id);
    if (!deleted) throw errors.notFound('File');
    await recordEvents(c.var.deps.db, [
      {
        app_id: target.appId,
        account_id: target.accountId,
        type: 'files.deleted_by_member',
        message: `File ${id} of ${store} was deleted by ${c.var.actor.email}.`,
        metadata: { store, file_id: id, by: c.var.actor.email },
        api_key_id: c.var.actor.apiKeyId,
        request_id: c.var.requestId,
      },
    ]);
    return remove.reply(c, 200, { file_id: id, deleted: true });
  });

  return r;
}
