/** What the app origin reads to serve a release: the live pointer, the release and its files, sealed secrets. */
import type { Executor } from '../db/database.ts';

export async function appPointer(db: Executor, appId: string) {
  return db.selectFrom('apps').select(['id', 'account_id', 'live_release_id', 'deleted_at']).where('id', '=', appId).executeTakeFirst();
}

/** A release with its app's account. */
export async function releaseWithAccount(db: Executor, releaseId: string) {
  return db
    .selectFrom('releases')
    .innerJoin('apps', 'apps.id', 'releases.app_id')
    .select(['releases.id', 'releases.app_id', 'releases.manifest', 'apps.account_id'])
    .where('releases.id', '=', releaseId)
    .executeTakeFirst();
}

export async function releaseFiles(db: Executor, releaseId: string) {
  return db.selectFrom('release_files').selectAll().where('release_id', '=', releaseId).execute();
}

/** The app's secrets, still sealed. */
export async function sealedSecrets(db: Executor, appId: string) {
  return db.selectFrom('app_secrets').select(['name', 'sealed']).where('app_id', '=', appId).execute();
}
