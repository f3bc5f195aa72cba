import type { Executor } from '../db/database.ts';
import type { Manifest } from '../manifest/schema.ts';

export async function findApp(db: Executor, appId: string) {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}
export type AppRow = NonNullable<Awaited<ReturnType<typeof findApp>>>;

export async function lockApp(db: Executor, appId: string) {
  return appRow(db, appId, { lock: true });
}

/** The app's row, locked `FOR UPDATE` until the transaction ends when asked. */
export async function appRow(db: Executor, appId: string, options: { lock: boolean }) {
  const q = db.selectFrom('apps').selectAll().where('id', '=', appId);
  return (options.lock ? q.forUpdate() : q).executeTakeFirstOrThrow();
}

export async function listApps(db: Executor, accountId: string) {
  return db
    .selectFrom('apps')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function provisionedResources(db: Executor, appId: string) {
  return db
    .selectFrom('app_resources')
    .selectAll()
    .where('app_id', '=', appId)
    .orderBy('resource_type')
    .orderBy('resource_name')
    .execute();
}

export async function secretNames(db: Executor, appId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('app_secrets')
    .select('name')
    .where('app_id', '=', appId)
    .execute();
  return rows.map((r) => r.name);
}

/** Points the app at its live release and takes the release's name, summary, visibility and tags. */
export async function pointAppAt(
  db: Executor,
  appId: string,
  releaseId: string,
  m: Manifest['app'],
) {
  await db
    .updateTable('apps')
    .set({
      live_release_id: releaseId,
      name: m.name,
      summary: m.summary ?? null,
      visibility: m.visibility ?? 'public',
      tags: JSON.stringify(m.tags ?? []),
      updated_at: new Date(),
      deleted_at: null,
    })
    .where('id', '=', appId)
    .execute();
}

/** Records what a resource is provisioned as, and by which release. */
export async function saveProvisioned(
  db: Executor,
  appId: string,
  r: { resource_type: string; resource_name: string; spec: unknown },
  releaseId: string,
) {
  const spec = JSON.stringify(r.spec);
  await db
    .insertInto('app_resources')
    .values({
      app_id: appId,
      resource_type: r.resource_type,
      resource_name: r.resource_name,
      spec,
      provisioned_release_id: releaseId,
    })
    .onConflict((oc) =>
      oc
        .columns(['app_id', 'resource_type', 'resource_name'])
        .doUpdateSet({ spec, provisioned_release_id: releaseId, updated_at: new Date() }),
    )
    .execute();
}

export async function insertApp(
  db: Executor,
  a: { id: string; accountId: string; app: Manifest['app'] },
) {
  return db
    .insertInto('apps')
    .values({
      id: a.id,
      account_id: a.accountId,
      name: a.app.name,
      summary: a.app.summary ?? null,
      visibility: a.app.visibility ?? 'public',
      tags: JSON.stringify(a.app.tags ?? []),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Tombstones an app: no live release, marked deleted; its data stays. */
export async function tombstoneApp(db: Executor, appId: string, at: Date) {
  await db
    .updateTable('apps')
    .set({ deleted_at: at, live_release_id: null, updated_at: at })
    .where('id', '=', appId)
    .execute();
}
