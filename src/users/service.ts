import { sql } from 'kysely';
import * as v from 'valibot';
import { generateApiKey } from '../api-keys/keys.ts';
import type { Db, Executor } from '../db/database.ts';
import type { Role } from '../db/schema.ts';
import { ApiError, errors } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { parseWith } from '../http/validate.ts';
import { firstUserBecomesOperator } from '../operators/first.ts';

export const Email = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254),
  v.email('must be an e-mail address'),
);
export const Username = v.pipe(
  v.string(),
  v.regex(
    /^[a-z0-9][a-z0-9-]{2,31}$/,
    'must be 3 to 32 lowercase letters, digits or hyphens, starting with a letter or digit',
  ),
);

/** A user's public identity: id, e-mail and username. */
export async function userIdentity(db: Executor, userId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'username'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
}

export async function findUserByEmail(db: Executor, email: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

async function issueKey(db: Executor, userId: string, name: string): Promise<string> {
  const key = generateApiKey();
  await db
    .insertInto('api_keys')
    .values({ id: newId('key'), user_id: userId, name, key_prefix: key.prefix, key_hash: key.hash })
    .execute();
  return key.raw;
}

/** A user and their own account, of which they are the owner. */
export async function createUserRow(
  db: Executor,
  email: string,
  username: string | null,
  accountName?: string,
  /** the plan the new account starts on (the server's `defaultPlan`); the table's default, Free, otherwise */
  planKey?: string,
) {
  const userId = newId('usr');
  const accountId = newId('acct');
  await db
    .insertInto('users')
    .values({ id: userId, email, username, default_account_id: accountId })
    .execute();
  await db
    .insertInto('accounts')
    .values({
      id: accountId,
      name: accountName ?? username ?? email.split('@')[0]!,
      owner_user_id: userId,
      ...(planKey ? { plan_key: planKey } : {}),
    })
    .execute();
  await db
    .insertInto('memberships')
    .values({ account_id: accountId, user_id: userId, role: 'owner' })
    .execute();
  await firstUserBecomesOperator(db, userId);
  return { userId, accountId };
}

/** A platform user, their own account (as owner) and a first API key. */
export async function createUser(
  db: Db,
  input: { email: string; username?: string; planKey?: string },
) {
  const email = parseWith(Email, input.email, 'email');
  const username =
    input.username === undefined ? null : parseWith(Username, input.username, 'username');
  return db.transaction().execute(async (trx) => {
    if (await findUserByEmail(trx, email))
      throw new ApiError('email_already_registered', `A user with e-mail ${email} already exists.`);
    if (
      username &&
      (await trx
        .selectFrom('users')
        .select('id')
        .where('username', '=', username)
        .executeTakeFirst())
    ) {
      throw new ApiError('username_taken', `The username ${username} is taken.`);
    }
    const { userId, accountId } = await createUserRow(
      trx,
      email,
      username,
      undefined,
      input.planKey,
    );
    const apiKey = await issueKey(trx, userId, 'admin command');
    return { user_id: userId, account_id: accountId, api_key: apiKey };
  });
}

/** Adds (or updates) a membership, creating the user if needed, and issues them an API key. */
export async function addMember(db: Db, input: { accountId: string; email: string; role: string }) {
  const email = parseWith(Email, input.email, 'email');
  const role = parseWith(
    v.picklist(
      ['owner', 'admin', 'developer', 'viewer'],
      'must be owner, admin, developer or viewer',
    ),
    input.role,
    'role',
  ) as Role;
  return db.transaction().execute(async (trx) => {
    const account = await trx
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', input.accountId)
      .executeTakeFirst();
    if (!account) throw errors.notFound('Account');
    const existing = await findUserByEmail(trx, email);
    const userId = existing?.id ?? (await createUserRow(trx, email, null)).userId;
    await trx
      .insertInto('memberships')
      .values({ account_id: account.id, user_id: userId, role })
      .onConflict((oc) => oc.columns(['account_id', 'user_id']).doUpdateSet({ role }))
      .execute();
    const apiKey = await issueKey(trx, userId, `member of ${account.id}`);
    return { user_id: userId, account_id: account.id, api_key: apiKey };
  });
}
