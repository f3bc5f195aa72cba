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
