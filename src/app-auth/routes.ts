/**
 * `/v0/apps/:app_id/app-users` and `/invites`: the app's team administers its app users. Every
 * member reads (`app_users.read`); owners, admins and developers change (`app_users.manage`); every
 * change is an event naming who made it.
 */
import { Hono, type Context } from 'hono';
import { appAccess } from '../apps/access.ts';
import { findRelease } from '../releases/records.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import { manifestOf } from '../manifest/stored.ts';
import {
  deleteAppUser,
  findAppUser,
  listAppUsers,
  pendingInvites,
  revokeAppUserSessions,
  setAppUser,
  withdrawInvite,
} from './admin.ts';
import {
  AppUserChange,
  AppUserDeleted,
  AppUserList,
  AppUserRecord,
  AppUserSignedOut,
  AppUsersQuery,
  InviteWithdrawn,
  PendingInviteList,
} from './schemas.ts';
import { timeIdCursor } from '../http/paging.ts';

const tags = ['App users'];
const list = operation({
  operationId: 'listAppUsers',
  summary: "The app's users, newest first, with their roles and last sign-in",
  description: '`q` matches part of an e-mail address.',
  tags,
  responses: { 200: AppUserList },
});
const change = operation({
  operationId: 'updateAppUser',
  summary: "Change an app user's roles, or disable or re-enable them",
  description:
    'Roles must be declared by the live release (`auth.roles`; else 400 `invalid_role`). A disabled user cannot sign in and every session of theirs ends at its next request. Recorded as `app_user.updated`.',
  tags,
  responses: { 200: AppUserRecord },
  errors: ['invalid_role'],
});
const signOut = operation({
  operationId: 'signOutAppUser',
  summary: 'End every session of an app user (they can sign in again)',
  tags,
  responses: { 200: AppUserSignedOut },
});
const remove = operation({
  operationId: 'deleteAppUser',
  summary: 'Delete an app user and their sessions',
  description:
    'The rows they created stay (their owner id no longer names anyone). Recorded as `app_user.deleted`.',
  tags,
  responses: { 200: AppUserDeleted },
});
const invites = operation({
  operationId: 'listAppInvites',
  summary: 'Invitations not yet accepted and not expired',
  tags,
  responses: { 200: PendingInviteList },
});
const withdraw = operation({
  operationId: 'withdrawAppInvite',
  summary: 'Withdraw an invitation: its link stops working',
  tags,
  responses: { 200: InviteWithdrawn },
});

async function record(
  c: Context<Env>,
  type: string,
  message: string,
  metadata: Record<string, unknown>,
) {
  const app = c.var.app;
  await recordEvents(c.var.deps.db, [
    {
      app_id: app.id,
      account_id: app.account_id,
      type,
      message: `${message} (by ${c.var.actor.email})`,
      metadata: { ...metadata, by: c.var.actor.email },
      api_key_id: c.var.actor.apiKeyId,
      request_id: c.var.requestId,
    },
  ]);
}

async function userOf(c: Context<Env>) {
  const user = await findAppUser(c.var.deps.db, c.var.app.id, c.req.param('user_id') ?? '');
  if (!user) throw errors.notFound('App user');
  return user;
}

async function declaredRoles(c: Context<Env>): Promise<string[]> {
  const app = c.var.app;
  const live = app.live_release_id
    ? await findRelease(c.var.deps.db, app.id, app.live_release_id)
    : undefined;
  return (live && manifestOf(live.manifest).resources.auth?.roles) || [];
}

export function appUserRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get(
    '/:app_id/app-users',
    list,
    appAccess('app_users.read'),
    query(AppUsersQuery),
    async (c) => {
      const q = queryOf(c, AppUsersQuery);
      const page = await listAppUsers(c.var.deps.db, c.var.app.id, {
        limit: q.limit ?? 50,
        q: q.q,
        after: q.cursor ? timeIdCursor.decode(q.cursor) : undefined,
      });
      return list.reply(c, 200, {
        app_id: c.var.app.id,
        app_users: page.users,
        cursor: page.next ? timeIdCursor.encode(page.next) : null,
      });
    },
  );

  r.patch(
    '/:app_id/app-users/:user_id',
    change,
    appAccess('app_users.manage'),
    jsonBody(AppUserChange),
    async (c) => {
      const body = bodyOf(c, AppUserChange);
      const user = await userOf(c);
      const { db } = c.var.deps;
      if (body.roles) {
        const declared = await declaredRoles(c);
        const undeclared = body.roles.filter((x) => !declared.includes(x));
        if (undeclared.length)
          throw new ApiError(
            'invalid_role',
            `The app does not declare the role(s) ${undeclared.join(', ')}.`,
            {
              roles: undeclared,
            },
          );
      }
      await setAppUser(db, c.var.app.id, user.id, {
        roles: body.roles ? [...new Set(body.roles)] : undefined,
        disabled: body.disabled,
      });
      const revoked = body.disabled ? await revokeAppUserSessions(db, c.var.app.id, user.id) : 0;
      const what = [
        body.roles ? `roles ${JSON.stringify(body.roles)}` : '',
        body.disabled === true ? 'disabled' : body.disabled === false ? 're-enabled' : '',
      ]
        .filter(Boolean)
        .join(', ');
      await record(c, 'app_user.updated', `App user ${user.email}: ${what || 'no change'}`, {
        app_user_id: user.id,
        ...(body.roles ? { roles: body.roles } : {}),
        ...(body.disabled === undefined
          ? {}
          : { disabled: body.disabled, sessions_revoked: revoked }),
      });
      return change.reply(c, 200, (await findAppUser(db, c.var.app.id, user.id))!);
    },
  );

  r.post(
    '/:app_id/app-users/:user_id/sign-out',
    signOut,
    appAccess('app_users.manage'),
    async (c) => {
      const user = await userOf(c);
      const revoked = await revokeAppUserSessions(c.var.deps.db, c.var.app.id, user.id);
      await record(c, 'app_user.signed_out', `App user ${user.email} was signed out everywhere`, {
        app_user_id: user.id,
        sessions_revoked: revoked,
      });
      return signOut.reply(c, 200, { id: user.id, sessions_revoked: revoked });
    },
  );

  r.delete('/:app_id/app-users/:user_id', remove, appAccess('app_users.manage'), async (c) => {
    const user = await userOf(c);
    await c.var.deps.db.transaction().execute((trx) => deleteAppUser(trx, c.var.app.id, user.id));
    await record(c, 'app_user.deleted', `App user ${user.email} was deleted`, {
      app_user_id: user.id,
    });
    return remove.reply(c, 200, { id: user.id, deleted: true });
  });

  r.get('/:app_id/invites', invites, appAccess('app_users.read'), async (c) =>
    invites.reply(c, 200, {
      app_id: c.var.app.id,
      invites: await pendingInvites(c.var.deps.db, c.var.app.id),
    }),
  );

  r.delete('/:app_id/invites/:invite_id', withdraw, appAccess('app_users.manage'), async (c) => {
    const id = c.req.param('invite_id');
    if (!(await withdrawInvite(c.var.deps.db, c.var.app.id, id)))
      throw errors.notFound('Invitation');
    await record(c, 'app_invite.withdrawn', `Invitation ${id} was withdrawn`, { invite_id: id });
    return withdraw.reply(c, 200, { invite_id: id, withdrawn: true });
  });

  return r;
}
