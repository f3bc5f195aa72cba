/** Who the operators are, and the record of what they did. */
import type { Executor } from '../db/database.ts';
import { newId } from '../lib/ids.ts';

export async function isOperator(db: Executor, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('operators')
    .select('user_id')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return !!row;
}

/** Names a user an operator; naming one twice keeps the first grant. True if newly named. */
export async function grantOperator(
  db: Executor,
  userId: string,
  grantedBy: string,
): Promise<boolean> {
  const r = await db
    .insertInto('operators')
    .values({ user_id: userId, granted_by: grantedBy })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function revokeOperator(db: Executor, userId: string): Promise<boolean> {
  const r = await db.deleteFrom('operators').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function listOperators(db: Executor) {
  return db
    .selectFrom('operators')
    .innerJoin('users', 'users.id', 'operators.user_id')
    .select(['operators.user_id', 'users.email', 'operators.granted_by', 'operators.granted_at'])
    .orderBy('operators.granted_at')
    .execute();
}

export type ActionRecord = {
  actorUserId: string | null;
  actorLabel: string;
  action: string;
  accountId?: string | null;
  appId?: string | null;
  detail?: Record<string, unknown>;
};

export async function recordAction(db: Executor, a: ActionRecord): Promise<void> {
  await db
    .insertInto('operator_actions')
    .values({
      id: newId('opa'),
      actor_user_id: a.actorUserId,
      actor_label: a.actorLabel,
      action: a.action,
      account_id: a.accountId ?? null,
      app_id: a.appId ?? null,
      detail: JSON.stringify(a.detail ?? {}),
    })
    .execute();
}

/** The action log, newest first, a page at a time (`before`: the last row's `seq`). */
export async function listActions(db: Executor, limit: number, before?: number) {
  let q = db
    .selectFrom('operator_actions')
    .leftJoin('users', 'users.id', 'operator_actions.actor_user_id')
    .select([
      'operator_actions.id',
      'operator_actions.seq',
      'operator_actions.at',
      'operator_actions.actor_user_id',
      'operator_actions.actor_label',
      'users.email as actor_email',
      'operator_actions.action',
      'operator_actions.account_id',
      'operator_actions.app_id',
      'operator_actions.detail',
    ])
    .orderBy('operator_actions.seq', 'desc')
    .limit(limit + 1);
  if (before) q = q.where('operator_actions.seq', '<', before);
  return q.execute();
}
