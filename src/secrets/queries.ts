import type { Executor } from '../db/database.ts';

/** The app's stored secrets (names and times only; values stay sealed in the table), by name. */
export async function listSecretRows(db: Executor, appId: string) {
  return db
    .selectFrom('app_secrets')
    .select(['name', 'created_at', 'updated_at'])
    .where('app_id', '=', appId)
    .orderBy('name')
    .execute();
}

/** Sets a secret's sealed value, creating or replacing it. */
export async function upsertSecret(
  db: Executor,
  s: { appId: string; name: string; sealed: Buffer },
) {
  return db
    .insertInto('app_secrets')
    .values({ app_id: s.appId, name: s.name, sealed: s.sealed })
    .onConflict((oc) =>
      oc.columns(['app_id', 'name']).doUpdateSet({ sealed: s.sealed, updated_at: new Date() }),
    )
    .returning(['name', 'created_at', 'updated_at'])
    .executeTakeFirstOrThrow();
}

/** Deletes a secret; whether there was one. */
export async function deleteSecret(
  db: Executor,
  s: { appId: string; name: string },
): Promise<boolean> {
  const gone = await db
    .deleteFrom('app_secrets')
    .where('app_id', '=', s.appId)
    .where('name', '=', s.name)
    .returning('name')
    .executeTakeFirst();
  return Boolean(gone);
}
