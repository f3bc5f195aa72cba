/** `/v0/accounts/:account_id/members` and `/invitations`: who is in an account. */
import { Hono, type Context } from 'hono';
import { enforce, LIMITS } from '../abuse/limits.ts';
import { accountAccess } from '../accounts/access.ts';
import { errors } from '../errors.ts';
import { requireRole } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import {
  ChangeRoleRequest,
  Invitation,
  InvitationRevoked,
  InviteMemberRequest,
  Member,
  MemberList,
  MemberRemoved,
} from './schemas.ts';
import { changeRole, invite, listMembers, removeMember, revokeInvitation } from './service.ts';

const tags = ['Members'];
const list = operation({
  operationId: 'listMembers',
  summary: 'List the members and open invitations of an account',
  tags,
  responses: { 200: MemberList },
});
const create = operation({
  operationId: 'inviteMember',
  summary: 'Invite someone by e-mail (owner or admin)',
  description:
    'Mails a link valid 7 days; whoever signs in (or signs up) with it joins with `role`. Only an owner can invite an owner. 409 `conflict` when the address is already a member.',
  tags,
  responses: { 201: Invitation },
  errors: ['conflict', 'abuse_throttled'],
});
const patch = operation({
  operationId: 'changeMemberRole',
  summary: "Change a member's role (owner or admin)",
  description:
    'Only an owner can make or change an owner; the last owner cannot be demoted (409 `last_owner`).',
  tags,
  responses: { 200: Member },
  errors: ['last_owner'],
});
const remove = operation({
  operationId: 'removeMember',
  summary: 'Remove a member (owner or admin), or leave',
  description:
    "Any member may remove themselves. Only an owner can remove an owner; the last owner cannot be removed (409 `last_owner`). The member's sessions and keys stop reaching the account at once.",
  tags,
  responses: { 200: MemberRemoved },
  errors: ['last_owner', 'forbidden'],
});
const revoke = operation({
  operationId: 'revokeInvitation',
  summary: 'Withdraw an invitation (owner or admin)',
  tags,
  responses: { 200: InvitationRevoked },
});

function userIdParam(c: Context<Env>): string {
  const id = c.req.param('user_id') ?? '';
  if (!/^usr_[0-9a-z]{1,64}$/.test(id)) throw errors.notFound('Member');
  return id;
}

export function memberRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:account_id/members', list, accountAccess(null), async (c) => {
    const accountId = c.var.membership.id;
    return list.reply(c, 200, {
      account_id: accountId,
      ...(await listMembers(c.var.deps.db, accountId)),
    });
  });

  r.post(
    '/:account_id/members',
    create,
    accountAccess('members.manage'),
    jsonBody(InviteMemberRequest),
    async (c) => {
      const m = c.var.membership;
      const body = bodyOf(c, InviteMemberRequest);
      // an invitation is a mail to an address: it shares that address's budget with sign-in mails
      await enforce(c.var.deps.db, 'invitations', [
        [`invitations:account:${m.id}`, LIMITS.invitationsPerAccount],
        [`email-request:addr:${body.email}`, LIMITS.emailRequestPerAddress],
      ]);
      const inv = await invite(c.var.deps, {
        accountId: m.id,
        accountName: m.name,
        actorRole: m.role,
        actorUserId: c.var.actor.userId,
        email: body.email,
        role: body.role,
      });
      return create.reply(c, 201, inv);
    },
  );

  r.patch(
    '/:account_id/members/:user_id',
    patch,
    accountAccess('members.manage'),
    jsonBody(ChangeRoleRequest),
    async (c) => {
      const m = c.var.membership;
      return patch.reply(
        c,
        200,
        await changeRole(c.var.deps.db, {
          accountId: m.id,
          actorRole: m.role,
          userId: userIdParam(c),
          role: bodyOf(c, ChangeRoleRequest).role,
        }),
      );
    },
  );

  r.delete('/:account_id/members/:user_id', remove, accountAccess(null), async (c) => {
    const m = c.var.membership;
    const userId = userIdParam(c);
    const self = userId === c.var.actor.userId;
    if (!self) await requireRole(c, m.id, 'members.manage');
    await removeMember(c.var.deps.db, { accountId: m.id, actorRole: m.role, self, userId });
    return remove.reply(c, 200, { account_id: m.id, user_id: userId, removed: true });
  });

  r.delete(
    '/:account_id/invitations/:invitation_id',
    revoke,
    accountAccess('members.manage'),
    async (c) => {
      const id = c.req.param('invitation_id') ?? '';
      if (!/^inv_[0-9a-z]{1,64}$/.test(id)) throw errors.notFound('Invitation');
      await revokeInvitation(c.var.deps.db, c.var.membership.id, id);
      return revoke.reply(c, 200, {
        account_id: c.var.membership.id,
        invitation_id: id,
        revoked: true,
      });
    },
  );

  return r;
}
