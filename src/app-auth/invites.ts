/**
 * Admin invites: a platform member creates an invite for an e-mail and app roles; the invitee opens
 * `invite_url` on the app origin (token in the URL fragment, never sent to servers in logs or
 * Referer) and sets a password; that creates the app user with the roles. Nothing is granted on
 * the platform side.
 */
import { sql } from 'kysely';
import { Hono } from 'hono';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { appOrigin } from '../apps/mappers.ts';
import { findRelease } from '../releases/records.ts';
import { manifestOf } from '../manifest/stored.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { component, DateTime, Url } from '../openapi/components.ts';
import { newId } from '../lib/ids.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';
import { RoleName } from '../manifest/schema.ts';
import { Email } from '../users/service.ts';
import { hashPassword } from './passwords.ts';
import type { AppUser } from './service.ts';

export const DEFAULT_INVITE_SECONDS = 7 * 24 * 3600;
export const AdminInviteRequest = component(
  'AdminInviteRequest',
  v.strictObject({
    email: Email,
    roles: v.optional(
      v.pipe(
        v.array(RoleName),
        v.check((r) => new Set(r).size === r.length, 'must not repeat roles'),
      ),
    ),
    expires_in_seconds: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1, 'must be 1 to 2592000'),
        v.maxValue(2_592_000, 'must be 1 to 2592000'),
      ),
    ),
  }),
);
export const AdminInviteResponse = component(
  'AdminInviteResponse',
  v.strictObject({
    invite_id: v.pipe(v.string(), v.startsWith('inv_')),
    email: v.string(),
    roles: v.array(v.string()),
    expires_at: DateTime,
    invite_url: Url,
  }),
);
const create = operation({
  operationId: 'createAdminInvite',
  summary: 'Invite an app user with roles (grants no platform access)',
  description:
    "The app's live release must declare `auth.mode` `app_users` (else 409 `auth_disabled`) and every requested role (else 400 `invalid_role`).",
  tags: ['App users'],
  responses: { 200: AdminInviteResponse },
  errors: ['auth_disabled', 'invalid_role'],
});

/** `POST /v0/apps/:app_id/admin-invites`. */
export function inviteRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.post(
    '/:app_id/admin-invites',
    create,
    appAccess('invites.create'),
    jsonBody(AdminInviteRequest),
    async (c) => {
      const body = bodyOf(c, AdminInviteRequest);
      const app = c.var.app;
      const live =
        app.live_release_id && !app.deleted_at
          ? await findRelease(c.var.deps.db, app.id, app.live_release_id)
          : undefined;
      const auth = live ? manifestOf(live.manifest).resources.auth : undefined;
      if (auth?.mode !== 'app_users')
        throw new ApiError(
          'auth_disabled',
          'Invites need a published app whose live release declares auth.mode "app_users".',
        );
      const roles = body.roles ?? [];
      const undeclared = roles.filter((x) => !(auth.roles ?? []).includes(x));
      if (undeclared.length)
        throw new ApiError(
          'invalid_role',
          `The app does not declare the role(s) ${undeclared.join(', ')}.`,
          { roles: undeclared },
        );
      const token = newSecretToken();
      const expires = new Date(
        Date.now() + (body.expires_in_seconds ?? DEFAULT_INVITE_SECONDS) * 1000,
      );
      const id = newId('inv');
      await c.var.deps.db
        .insertInto('app_invites')
        .values({
          id,
          app_id: app.id,
          email: body.email,
          roles: JSON.stringify(roles),
          token_hash: tokenHash(token),
          expires_at: expires,
          created_by_user_id: c.var.actor.userId,
        })
        .execute();
      return create.reply(c, 200, {
        invite_id: id,
        email: body.email,
        roles,
        expires_at: expires.toISOString(),
        invite_url: `${appOrigin(c.var.deps.config, app.id)}/_platform/auth/invite#token=${token}`,
      });
    },
  );
  return r;
}

/** Accepting an invite: creates the app user with the invited roles (e-mail counts as verified) and signs them in. */
export async function acceptInvite(
  deps: Deps,
  appId: string,
  token: string,
  password: string,
): Promise<AppUser> {
  if (!token || token.length > 100)
    throw new ApiError('invalid_invite', 'This invite is invalid, expired or already used.');
  const password_hash = await hashPassword(password);
  return deps.db.transaction().execute(async (trx) => {
    const invite = await trx
      .updateTable('app_invites')
      .set({ accepted_at: new Date() })
      .where('token_hash', '=', tokenHash(token))
      .where('app_id', '=', appId)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', new Date())
      .returning(['email', 'roles'])
      .executeTakeFirst();
    if (!invite)
      throw new ApiError('invalid_invite', 'This invite is invalid, expired or already used.');
    const row = await trx
      .insertInto('app_users')
      .values({
        id: newId('usr'),
        app_id: appId,
        email: invite.email,
        password_hash,
        roles: JSON.stringify(invite.roles),
        verified: true,
      })
      .onConflict((oc) => oc.expression(sql`app_id, lower(email)`).doNothing())
      .returning(['id', 'email', 'roles', 'verified'])
      .executeTakeFirst();
    if (!row)
      throw new ApiError(
        'email_already_registered',
        'An account with this e-mail already exists; log in instead.',
      );
    return { id: row.id, email: row.email, roles: row.roles, verified: row.verified };
  });
}

export const INVITE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Accept your invitation</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}input,button{font:inherit;padding:.5rem;width:100%;margin:.25rem 0}#msg{margin-top:1rem}</style></head>
<body><h1>Accept your invitation</h1><form id="f"><label>Choose a password (8 characters or more)<input id="pw" type="password" minlength="8" required autocomplete="new-password"></label><button>Accept</button></form><p id="msg" role="status"></p>
<script>
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname);
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await fetch('/_platform/auth/invite/accept', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password: document.getElementById('pw').value }) });
  const body = await r.json();
  document.getElementById('msg').textContent = r.ok ? 'Welcome, ' + body.user.email + '. You are signed in.' : body.error.message;
  if (r.ok) setTimeout(() => (location.href = '/'), 800);
});
</script></body></html>`;
