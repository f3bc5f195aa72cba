/**
 * An app's team administers its app users: list them (with their last sign-in), change their roles,
 * disable and re-enable them, sign them out everywhere, delete them; list and withdraw pending
 * invitations. Sessions are read from the database on every request (`sessionUser`), so a disable
 * or a sign-out ends a session at its next request.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { containsPattern } from '../lib/like.ts';

export type AppUserRecord = {
  id: string;
  email: string;
  roles: string[];
  verified: boolean;
  disabled: boolean;
  created_at: string;
  last_sign_in_at: string | null;
};

const lastSignIn = sql<Date | null>`(select max(s.created_at) from app_sessions s where s.user_id = u.id)`;

function record(r: {
  id: string;
  email: string;
  roles: string[];
  verified: boolean;
  disabled_at: Date | null;
  created_at: Date;
  last_sign_in_at: Date | null;
}): AppUserRecord {
  return {
    id: r.id,
    email: r.email,
    roles: r.roles,
    verified: r.verified,
    disabled: r.disabled_at !== null,
    created_at: r.created_at.toISOString(),
    last_sign_in_at: r.last_sign_in_at?.toISOString() ?? null,
  };
}

const columns = [
  'u.id',
  'u.email',
  'u.roles',
  'u.verified',
  'u.disabled_at',
  'u.created_at',
  lastSignIn.as('last_sign_in_at'),
] as const;

/** Newest first; `q` matches part of an e-mail; `after` is the last row's `[created_at, id]`. */
export async function listAppUsers(
  db: Executor,
  appId: string,
  options: { limit: number; q?: string; after?: { at: string; id: string } },
) {
  let q = db
    .selectFrom('app_users as u')
    .select(columns)
    .select(sql<string>`u.created_at::text`.as('created_key'))
    .where('u.app_id', '=', appId)
    .orderBy('u.created_at', 'desc')
    .orderBy('u.id', 'desc')
    .limit(options.limit + 1);
  if (options.q) q = q.where('u.email', 'ilike', containsPattern(options.q));
  if (options.after)
    q = q.where(
      sql<boolean>`(u.created_at, u.id) < (${options.after.at}::timestamptz, ${options.after.id})`,
    );
  const rows = await q.execute();
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    users: page.map(record),
    next: rows.length > options.limit && last ? { at: last.created_key, id: last.id } : null,
  };
}

export async function findAppUser(db: Executor, appId: string, userId: string) {
  const row = await db
    .selectFrom('app_users as u')
    .select(columns)
    .where('u.app_id', '=', appId)
    .where('u.id', '=', userId)
    .executeTakeFirst();
  return row ? record(row) : undefined;
}

/** Revokes every live session of the user; how many there were. */
export async function revokeAppUserSessions(db: Executor, appId: string, userId: string) {
  const r = await db
    .updateTable('app_sessions')
    .set({ revoked_at: new Date() })
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function setAppUser(
  db: Executor,
  appId: string,
  userId: string,
  change: { roles?: string[]; disabled?: boolean },
) {
  await db
    .updateTable('app_users')
    .set({
      updated_at: new Date(),
      ...(change.roles ? { roles: JSON.stringify(change.roles) } : {}),
      ...(change.disabled === undefined
        ? {}
        : { disabled_at: change.disabled ? sql<Date>`coalesce(disabled_at, now())` : null }),
    })
    .where('app_id', '=', appId)
    .where('id', '=', userId)
    .execute();
}

/** Deletes the user with their sessions and verification links (their data rows stay, as the decisions say). */
export async function deleteAppUser(db: Executor, appId: string, userId: string) {
  await db
    .deleteFrom('app_sessions')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .execute();
  await db
    .deleteFrom('app_email_verifications')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .execute();
  const r = await db
    .deleteFrom('app_users')
    .where('app_id', '=', appId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function pendingInvites(db: Executor, appId: string) {
  const rows = await db
    .selectFrom('app_invites')
    .select(['id', 'email', 'roles', 'expires_at', 'created_at'])
    .where('app_id', '=', appId)
    .where('accepted_at', 'is', null)
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .limit(500)
    .execute();
  return rows.map((r) => ({
    invite_id: r.id,
    email: r.email,
    roles: r.roles as unknown as string[],
    expires_at: r.expires_at.toISOString(),
    created_at: r.created_at.toISOString(),
  }));
}

export async function withdrawInvite(db: Executor, appId: string, inviteId: string) {
  const r = await db
    .deleteFrom('app_invites')
    .where('app_id', '=', appId)
    .where('id', '=', inviteId)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
