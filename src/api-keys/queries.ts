import type { Executor } from '../db/database.ts';

export async function findActiveKeyByHash(db: Executor, hash: Buffer) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select([
      'k.id',
      'k.key_prefix',
      'k.last_used_at',
      'k.revoked_at',
      'u.id as user_id',
      'u.email',
      'u.default_account_id',
    ])
    .where('k.key_hash', '=', hash)
    .executeTakeFirst();
}

export async function touchKey(db: Executor, id: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: new Date() }).where('id', '=', id).execute();
}

export async function insertKey(
  db: Executor,
  row: { id: string; user_id: string; name: string; key_prefix: string; key_hash: Buffer },
) {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function listKeys(db: Executor, userId: string) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findKey(db: Executor, userId: string, id: string) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function renameKey(db: Executor, userId: string, id: string, name: string) {
  return db
    .updateTable('api_keys')
    .set({ name })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Sets revoked_at only if unset; returns the row and whether this call revoked it. */
export async function revokeKey(db: Executor, userId: string, id: string) {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (revoked) return { row: revoked, revoked: true };
  const row = await findKey(db, userId, id);
  return row ? { row, revoked: false } : undefined;
}

export type ApiKeyRow = NonNullable<Awaited<ReturnType<typeof findKey>>>;
