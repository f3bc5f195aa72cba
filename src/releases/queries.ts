/**
 * What the app origin reads to serve a release: the live pointer, the release and its files, sealed
 * secrets. Each runs as a named prepared statement (`hotRows`, src/db/prepared.ts): they are the cold path.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { hotRows } from '../db/prepared.ts';

/** The live pointer with what decides whether and how the app may serve: its account's plan and the operator's flags. */
export async function appPointer(db: Executor, appId: string) {
  const builder = db
    .selectFrom('apps')
    .innerJoin('accounts', 'accounts.id', 'apps.account_id')
    .select([
      'apps.id',
      'apps.account_id',
      'apps.live_release_id',
      'apps.deleted_at',
      'accounts.plan_key',
      sql<boolean>`exists (select 1 from account_flags f where f.account_id = apps.account_id and f.flag = 'suspended')`.as('account_suspended'),
      sql<string[] | null>`(select array_agg(f.flag) from app_flags f where f.app_id = apps.id)`.as('app_flags'),
    ])
    .where('apps.id', '=', appId);
  return (await hotRows(db, builder))[0];
}

/** A release with its app's account. */
export async function releaseWithAccount(db: Executor, releaseId: string) {
  const builder = db
    .selectFrom('releases')
    .innerJoin('apps', 'apps.id', 'releases.app_id')
    .select(['releases.id', 'releases.app_id', 'releases.manifest', 'apps.account_id'])
    .where('releases.id', '=', releaseId);
  return (await hotRows(db, builder))[0];
}

export async function releaseFiles(db: Executor, releaseId: string) {
  return hotRows(db, db.selectFrom('release_files').selectAll().where('release_id', '=', releaseId));
}

/** The compressed variants of a release's files (its account's, looked up in the query so it can run beside the release's). */
export async function releaseVariants(db: Executor, releaseId: string) {
  const builder = db
    .selectFrom('blob_variants as v')
    .select(['v.sha256', 'v.encoding', 'v.variant_sha256', 'v.size'])
    .where('v.account_id', '=', (eb) => eb.selectFrom('releases').innerJoin('apps', 'apps.id', 'releases.app_id').select('apps.account_id').where('releases.id', '=', releaseId))
    .where('v.variant_sha256', 'is not', null)
    .where('v.sha256', 'in', (eb) => eb.selectFrom('release_files').select('sha256').where('release_id', '=', releaseId));
  return hotRows(db, builder);
}

/** The app's secrets, still sealed. */
export async function sealedSecrets(db: Executor, appId: string) {
  return hotRows(db, db.selectFrom('app_secrets').select(['name', 'sealed']).where('app_id', '=', appId));
}
