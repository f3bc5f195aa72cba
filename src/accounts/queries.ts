import type { Executor } from '../db/database.ts';

export async function findMembership(db: Executor, accountId: string, userId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.name', 'a.owner_user_id', 'a.plan_key', 'm.role'])
    .where('m.account_id', '=', accountId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

export async function listMemberships(db: Executor, userId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.name', 'a.owner_user_id', 'm.role', 'm.created_at'])
    .where('m.user_id', '=', userId)
    .orderBy('m.created_at')
    .orderBy('a.id')
    .execute();
}

export type Membership = NonNullable<Awaited<ReturnType<typeof findMembership>>>;
