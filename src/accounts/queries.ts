import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

export async function findMembership(db: Executor, accountId: string, userId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select([
      'a.id',
      'a.name',
      'a.owner_user_id',
      'a.plan_key',
      'm.role',
      sql<boolean>`exists (select 1 from account_flags f where f.account_id = a.id and f.flag = 'suspended')`.as(
        'suspended',
      ),
    ])
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

/** The account list as the API shows it: membership items and the default account (the user's own, or the first). */
export async function membershipList(
  db: Executor,
  userId: string,
  defaultAccountId: string | null,
) {
  const rows = await listMemberships(db, userId);
  const accounts = rows.map((m) => ({
    id: m.id,
    account_id: m.id,
    name: m.name,
    owner_user_id: m.owner_user_id,
    role: m.role,
  }));
  return {
    accounts,
    default_account_id:
      accounts.find((a) => a.id === defaultAccountId)?.id ?? accounts[0]?.id ?? null,
  };
}
