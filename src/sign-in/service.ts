/**
 * E-mail link sign-in and sign-up. A link carries a one-time token (256 bits, only its hash
 * stored, valid 15 minutes; an invitation's link 7 days). Confirming it signs an existing user in,
 * or, for a new address, starts a pending sign-up (its own one-time token in a cookie, 30 minutes)
 * that `completeSignup` turns into a user, their own account and a session. An invitation's link
 * also adds the membership it offers, to whoever signs in or signs up with it.
 */
import { sql } from 'kysely';
import { publicUrl } from '../config.ts';
import type { Db, Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { clock, fromNow } from '../lib/clock.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';
import { LINK_SLOT, unsentLink } from '../mail/links.ts';
import { queueMail } from '../mail/queue.ts';
import { createUserRow, findUserByEmail } from '../users/service.ts';
import { createSession } from './sessions.ts';

export const LINK_MINUTES = 15;
export const INVITATION_DAYS = 7;
export const PENDING_SIGNUP_MINUTES = 30;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type Signed = {
  token: string;
  userId: string;
  email: string;
  username: string | null;
  defaultAccountId: string | null;
  csrfToken: string;
};

/** The console page a link opens; the token rides in the fragment, which browsers never send to a server. */
export function confirmLink(deps: Deps, token: string): string {
  return `${publicUrl(deps.config, deps.config.hosts.console)}/auth/confirm#token=${token}`;
}

/** Creates a sign-in link for `email` and queues the message; says nothing about whether a user exists. */
export async function requestLink(deps: Deps, email: string): Promise<void> {
  const row = unsentLink();
  await deps.db.transaction().execute(async (trx) => {
    const user = await findUserByEmail(trx, email);
    await trx
      .insertInto('email_auth_tokens')
      .values({
        ...row,
        email,
        created_at: clock.now(),
        expires_at: fromNow(LINK_MINUTES * 60_000),
      })
      .execute();
    const link = LINK_SLOT;
    const console = publicUrl(deps.config, deps.config.hosts.console);
    await queueMail(trx, {
      to: email,
      subject: user ? 'Your sign-in link' : 'Finish signing up',
      link: { table: 'email_auth_tokens', id: row.id, base: confirmLink(deps, '') },
      text: [
        user
          ? `Someone (hopefully you) asked to sign in to ${console} as ${email}.`
          : `Someone (hopefully you) asked to sign up at ${console} with ${email}.`,
        '',
        `Open this link within ${LINK_MINUTES} minutes to ${user ? 'sign in' : 'choose your username and finish signing up'}. It works once:`,
        link,
        '',
        'If this was not you, ignore this message: nothing happens unless the link is opened and confirmed.',
      ].join('\n'),
    });
  });
}

const invalidLink = () =>
  new ApiError(
    'invalid_email_auth_token',
    'This sign-in link is invalid, expired or already used. Ask for a new one.',
  );

/** Joins the user to the account an invitation offers; someone already a member keeps their role. */
async function acceptInvitation(
  trx: Executor,
  invitationId: string | null,
  userId: string,
): Promise<void> {
  if (!invitationId) return;
  const inv = await trx
    .updateTable('account_invitations')
    .set({ accepted_at: clock.now() })
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', clock.now())
    .returning(['account_id', 'role'])
    .executeTakeFirst();
  if (!inv) throw invalidLink();
  await trx
    .insertInto('memberships')
    .values({ account_id: inv.account_id, user_id: userId, role: inv.role })
    .onConflict((oc) => oc.columns(['account_id', 'user_id']).doNothing())
    .execute();
}

async function signIn(
  trx: Executor,
  user: { id: string; email: string; username: string | null; default_account_id: string | null },
): Promise<Signed> {
  const { token, session } = await createSession(trx, user.id);
  return {
    token,
    userId: user.id,
    email: user.email,
    username: user.username,
    defaultAccountId: user.default_account_id,
    csrfToken: session.csrfToken,
  };
}

/** Consumes a link's token: an existing user is signed in; a new address gets a pending sign-up. */
export async function confirmToken(
  db: Db,
  token: string,
): Promise<{ signedIn: Signed } | { pending: { token: string; email: string } }> {
  if (!TOKEN.test(token)) throw invalidLink();
  return db.transaction().execute(async (trx) => {
    const link = await trx
      .updateTable('email_auth_tokens')
      .set({ used_at: clock.now() })
      .where('token_hash', '=', tokenHash(token))
      .where('used_at', 'is', null)
      .where('expires_at', '>', clock.now())
      .returning(['email', 'invitation_id'])
      .executeTakeFirst();
    if (!link) throw invalidLink();
    const user = await findUserByEmail(trx, link.email);
    if (user) {
      await acceptInvitation(trx, link.invitation_id, user.id);
      return { signedIn: await signIn(trx, user) };
    }
    if (link.invitation_id) {
      const inv = await trx
        .selectFrom('account_invitations')
        .select('id')
        .where('id', '=', link.invitation_id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .executeTakeFirst();
      if (!inv) throw invalidLink();
    }
    const pending = newSecretToken();
    await trx
      .insertInto('pending_signups')
      .values({
        token_hash: tokenHash(pending),
        email: link.email,
        invitation_id: link.invitation_id,
        created_at: clock.now(),
        expires_at: fromNow(PENDING_SIGNUP_MINUTES * 60_000),
      })
      .execute();
    return { pending: { token: pending, email: link.email } };
  });
}

/** Turns a pending sign-up into a user, their own account (owner) and a session. */
export async function completeSignup(
  db: Db,
  pendingToken: string | undefined,
  input: { username: string; accountName?: string; planKey?: string },
): Promise<Signed> {
  const invalid = () =>
    new ApiError(
      'invalid_pending_signup',
      'This sign-up has expired or was already completed. Ask for a new sign-in link.',
    );
  if (!pendingToken || !TOKEN.test(pendingToken)) throw invalid();
  return db.transaction().execute(async (trx) => {
    const pending = await trx
      .selectFrom('pending_signups')
      .select(['token_hash', 'email', 'invitation_id'])
      .where('token_hash', '=', tokenHash(pendingToken))
      .where('used_at', 'is', null)
      .where('expires_at', '>', clock.now())
      .forUpdate()
      .executeTakeFirst();
    if (!pending) throw invalid();
    if (await findUserByEmail(trx, pending.email))
      throw new ApiError(
        'email_already_registered',
        `${pending.email} already has an account; sign in instead.`,
      );
    if (
      await trx
        .selectFrom('users')
        .select('id')
        .where('username', '=', input.username)
        .executeTakeFirst()
    ) {
      throw new ApiError(
        'username_taken',
        `The username ${input.username} is taken; choose another.`,
        { username: input.username },
      );
    }
    await sql`savepoint create_user`.execute(trx);
    let created: { userId: string; accountId: string };
    try {
      created = await createUserRow(
        trx,
        pending.email,
        input.username,
        input.accountName,
        input.planKey,
      );
    } catch (err) {
      // a concurrent sign-up took the name or the address between the checks and the insert
      await sql`rollback to savepoint create_user`.execute(trx);
      const constraint = (err as { constraint?: string }).constraint;
      if (constraint === 'users_username_key')
        throw new ApiError(
          'username_taken',
          `The username ${input.username} is taken; choose another.`,
          { username: input.username },
        );
      if (constraint === 'users_email_key')
        throw new ApiError(
          'email_already_registered',
          `${pending.email} already has an account; sign in instead.`,
        );
      throw err;
    }
    await trx
      .updateTable('pending_signups')
      .set({ used_at: clock.now() })
      .where('token_hash', '=', pending.token_hash)
      .execute();
    await acceptInvitation(trx, pending.invitation_id, created.userId);
    return signIn(trx, {
      id: created.userId,
      email: pending.email,
      username: input.username,
      default_account_id: created.accountId,
    });
  });
}
