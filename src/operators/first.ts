/**
 * On a fresh install the first user becomes the server's operator, so that whoever installed it can
 * run it from the console without a second command. "Fresh" means: no other user and no operator.
 * Without SMTP the sign-in link only reaches the terminal running the service, so that first user
 * is whoever can read it; with SMTP, the banner says to sign up before sharing the address.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { grantOperator } from './queries.ts';

export const FIRST_USER = 'first user';

/** Inside the transaction that created `userId`: names them operator if they are the first user. */
export async function firstUserBecomesOperator(trx: Executor, userId: string): Promise<boolean> {
  // two first sign-ups at once: the lock orders them, and the second sees the first's user
  await sql`select pg_advisory_xact_lock(hashtext('platform.first-operator'))`.execute(trx);
  const other = await trx
    .selectFrom('users')
    .select('id')
    .where('id', '!=', userId)
    .limit(1)
    .executeTakeFirst();
  if (other) return false;
  const anyOperator = await trx
    .selectFrom('operators')
    .select('user_id')
    .limit(1)
    .executeTakeFirst();
  if (anyOperator) return false;
  return grantOperator(trx, userId, FIRST_USER);
}
