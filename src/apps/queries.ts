import type { Executor } from '../db/database.ts';

export async function findApp(db: Executor, appId: string) {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}
export type AppRow = NonNullable<Awaited<ReturnType<typeof findApp>>>;

export async function lockApp(db: Executor, appId: string) {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).forUpdate().executeTakeFirstOrThrow();
}

export async function listApps(db: Executor, accountId: string) {
  return db.selectFrom('apps').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null).orderBy('created_at', 'desc').orderBy('id').execute();
}

export async function findRelease(db: Executor, appId: string, releaseId: string) {
  return db.selectFrom('releases').selectAll().where('app_id', '=', appId).where('id', '=', releaseId).executeTakeFirst();
}
export type ReleaseRow = NonNullable<Awaited<ReturnType<typeof findRelease>>>;

export async function listReleases(db: Executor, appId: string) {
  return db.selectFrom('releases').selectAll().where('app_id', '=', appId).orderBy('seq', 'desc').execute();
}

export async function provisionedResources(db: Executor, appId: string) {
  return db.selectFrom('app_resources').selectAll().where('app_id', '=', appId).orderBy('resource_type').orderBy('resource_name').execute();
}

export async function secretNames(db: Executor, appId: string): Promise<string[]> {
  const rows = await db.selectFrom('app_secrets').select('name').where('app_id', '=', appId).execute();
  return rows.map((r) => r.name);
}
