import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/** A file that is stored and not deleted, by app, store and id. */
export async function liveFile(
  db: Executor,
  where: { appId: string; store: string; fileId: string },
) {
  return db
    .selectFrom('app_files')
    .selectAll()
    .where('app_id', '=', where.appId)
    .where('store', '=', where.store)
    .where('id', '=', where.fileId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** A store's files, newest first, with their uploader's e-mail; `after` is the last row's `[created_at, id]`. */
export async function listStoreFiles(
  db: Executor,
  where: { appId: string; store: string },
  options: { limit: number; after?: { at: string; id: string } },
) {
  let q = db
    .selectFrom('app_files as f')
    .leftJoin('app_users as u', 'u.id', 'f.owner_user_id')
    .select([
      'f.id',
      'f.store',
      'f.filename',
      'f.content_type',
      'f.size',
      'f.created_at',
      'f.owner_user_id',
      'u.email as owner_email',
      sql<string>`f.created_at::text`.as('created_key'),
    ])
    .where('f.app_id', '=', where.appId)
    .where('f.store', '=', where.store)
    .where('f.deleted_at', 'is', null)
    .orderBy('f.created_at', 'desc')
    .orderBy('f.id', 'desc')
    .limit(options.limit + 1);
  if (options.after)
    q = q.where(
      sql<boolean>`(f.created_at, f.id) < (${options.after.at}::timestamptz, ${options.after.id})`,
    );
  return q.execute();
}
