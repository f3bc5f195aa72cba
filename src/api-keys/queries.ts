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

/** A page of the user's keys, newest first; `after` is the last key of the previous page. */
export async function listKeys(
  db: Executor,
  userId: string,
  page: { limit: number; after?: { created_at: Date; id: string } },
) {
  let q = db.selectFrom('api_keys').selectAll().where('user_id', '=', userId);
  const after = page.after;
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.created_at),
        eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)]),
      ]),
    );
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

/** How many unrevoked keys the user holds, after locking the user's row (creations take turns). */
export async function lockAndCountLiveKeys(db: Executor, userId: string): Promise<number> {
  await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
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
