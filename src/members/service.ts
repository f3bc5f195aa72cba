/**
 * Membership changes. Owners and admins manage members; an admin can neither make nor touch an
 * owner; the last owner can be neither demoted nor removed (409 `last_owner`). Access follows the
 * membership row on every request, so a removed member's sessions and keys stop reaching the
 * account at once.
 */
import { oneLine } from '../lib/one-line.ts';
import type { Db, Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Role } from '../db/schema.ts';
import { ApiError, errors } from '../errors.ts';
import { clock, fromNow } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { LINK_SLOT, unsentLink } from '../mail/links.ts';
import { queueMail } from '../mail/queue.ts';
import { confirmLink, INVITATION_DAYS } from '../sign-in/service.ts';
import type { Invitation, Member } from './schemas.ts';

/** The members of an account with their users (a query to narrow or order). */
function membersOf(db: Executor, accountId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.username', 'm.role', 'm.created_at'])
    .where('m.account_id', '=', accountId);
}

function toMember(row: {
  id: string;
  email: string;
  username: string | null;
  role: Role;
  created_at: Date;
}): Member {
  return {
    user_id: row.id,
    email: row.email,
    username: row.username,
    role: row.role,
    joined_at: row.created_at.toISOString(),
  };
}

export async function listMembers(
  db: Executor,
  accountId: string,
): Promise<{ members: Member[]; invitations: Invitation[] }> {
  const members = await membersOf(db, accountId).orderBy('m.created_at').orderBy('u.id').execute();
  const invitations = await db
    .selectFrom('account_invitations')
    .select(['id', 'email', 'role', 'expires_at'])
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', clock.now())
    .orderBy('created_at')
    .execute();
  return {
    members: members.map(toMember),
    invitations: invitations.map((i) => ({
      invitation_id: i.id,
      email: i.email,
      role: i.role,
      expires_at: i.expires_at.toISOString(),
    })),
  };
}

function adminCannotTouchOwners(actorRole: Role, ...roles: Role[]): void {
  if (actorRole !== 'owner' && roles.includes('owner'))
    throw errors.forbidden('Only an owner can make, change or remove an owner.', {
      role: actorRole,
    });
}

/** E-mails an invitation link; whoever signs in (or signs up) with it joins with `role`. */
export async function invite(
  deps: Deps,
  input: {
    accountId: string;
    accountName: string;
    actorRole: Role;
    actorUserId: string;
    email: string;
    role: Role;
  },
): Promise<Invitation> {
  adminCannotTouchOwners(input.actorRole, input.role);
  return deps.db.transaction().execute(async (trx) => {
    const member = await trx
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select('m.user_id')
      .where('m.account_id', '=', input.accountId)
      .where((eb) => eb(eb.fn('lower', ['u.email']), '=', input.email))
      .executeTakeFirst();
    if (member)
      throw errors.conflict(`${input.email} is already a member of this account.`, {
        user_id: member.user_id,
      });
    // one open invitation an address: a repeat would mail it again, past the per-address mail limit
    const open = await trx
      .selectFrom('account_invitations')
      .select(['id', 'expires_at'])
      .where('account_id', '=', input.accountId)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', input.email.toLowerCase()))
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', clock.now())
      .executeTakeFirst();
    if (open)
      throw errors.conflict(
        `${input.email} already has an open invitation (until ${open.expires_at.toISOString()}). Withdraw it to send a new one.`,
        { invitation_id: open.id, expires_at: open.expires_at.toISOString() },
      );
    const id = newId('inv');
    const expires = fromNow(INVITATION_DAYS * 86_400_000);
    await trx
      .insertInto('account_invitations')
      .values({
        id,
        account_id: input.accountId,
        email: input.email,
        role: input.role,
        invited_by_user_id: input.actorUserId,
        created_at: clock.now(),
        expires_at: expires,
      })
      .execute();
    const row = unsentLink();
    await trx
      .insertInto('email_auth_tokens')
      .values({
        ...row,
        email: input.email,
        invitation_id: id,
        created_at: clock.now(),
        expires_at: expires,
      })
      .execute();
    const link = LINK_SLOT;
    const accountName = oneLine(input.accountName);
    await queueMail(trx, {
      to: input.email,
      subject: `You are invited to ${accountName}`,
      link: { table: 'email_auth_tokens', id: row.id, base: confirmLink(deps, '') },
      text: [
        `You are invited to join the account "${accountName}" as ${input.role}.`,
        '',
        `Open this link within ${INVITATION_DAYS} days to accept; you will sign in, or sign up if you are new. It works once:`,
        link,
        '',
        'If you did not expect this, ignore this message.',
      ].join('\n'),
    });
    return {
      invitation_id: id,
      email: input.email,
      role: input.role,
      expires_at: expires.toISOString(),
    };
  });
}

/** Locks the account's memberships and returns the target's, or 404. */
async function lockTarget(
  trx: Executor,
  accountId: string,
  userId: string,
): Promise<{ role: Role; owners: number }> {
  const rows = await trx
    .selectFrom('memberships')
    .select(['user_id', 'role'])
    .where('account_id', '=', accountId)
    .forUpdate()
    .execute();
  const target = rows.find((r) => r.user_id === userId);
  if (!target) throw errors.notFound('Member');
  return { role: target.role, owners: rows.filter((r) => r.role === 'owner').length };
}

/** Keeps `accounts.owner_user_id` naming an owner after owners change. */
async function fixRecordedOwner(trx: Executor, accountId: string): Promise<void> {
  const account = await trx
    .selectFrom('accounts')
    .select('owner_user_id')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const owners = await trx
    .selectFrom('memberships')
    .select('user_id')
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .orderBy('created_at')
    .execute();
  if (owners.length && !owners.some((o) => o.user_id === account.owner_user_id)) {
    await trx
      .updateTable('accounts')
      .set({ owner_user_id: owners[0]!.user_id })
      .where('id', '=', accountId)
      .execute();
  }
}

const lastOwner = () =>
  new ApiError('last_owner', 'An account needs an owner: make someone else an owner first.');

export async function changeRole(
  db: Db,
  input: { accountId: string; actorRole: Role; userId: string; role: Role },
): Promise<Member> {
  return db.transaction().execute(async (trx) => {
    const target = await lockTarget(trx, input.accountId, input.userId);
    adminCannotTouchOwners(input.actorRole, target.role, input.role);
    if (target.role === 'owner' && input.role !== 'owner' && target.owners === 1) throw lastOwner();
    await trx
      .updateTable('memberships')
      .set({ role: input.role })
      .where('account_id', '=', input.accountId)
      .where('user_id', '=', input.userId)
      .execute();
    await fixRecordedOwner(trx, input.accountId);
    return toMember(
      await membersOf(trx, input.accountId)
        .where('m.user_id', '=', input.userId)
        .executeTakeFirstOrThrow(),
    );
  });
}

/** Removes a member (or lets a member leave); their default account moves to one they still belong to. */
export async function removeMember(
  db: Db,
  input: { accountId: string; actorRole: Role; self: boolean; userId: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const target = await lockTarget(trx, input.accountId, input.userId);
    if (!input.self) adminCannotTouchOwners(input.actorRole, target.role);
    if (target.role === 'owner' && target.owners === 1) throw lastOwner();
    await trx
      .deleteFrom('memberships')
      .where('account_id', '=', input.accountId)
      .where('user_id', '=', input.userId)
      .execute();
    await fixRecordedOwner(trx, input.accountId);
    const user = await trx
      .selectFrom('users')
      .select('default_account_id')
      .where('id', '=', input.userId)
      .executeTakeFirstOrThrow();
    if (user.default_account_id === input.accountId) {
      const next = await trx
        .selectFrom('memberships')
        .select('account_id')
        .where('user_id', '=', input.userId)
        .orderBy('created_at')
        .limit(1)
        .executeTakeFirst();
      await trx
        .updateTable('users')
        .set({ default_account_id: next?.account_id ?? null })
        .where('id', '=', input.userId)
        .execute();
    }
  });
}

export async function revokeInvitation(
  db: Executor,
  accountId: string,
  invitationId: string,
): Promise<void> {
  const r = await db
    .updateTable('account_invitations')
    .set({ revoked_at: clock.now() })
    .where('id', '=', invitationId)
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!r.numUpdatedRows) throw errors.notFound('Invitation');
}
