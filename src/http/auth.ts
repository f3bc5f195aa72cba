import type { Context, MiddlewareHandler } from 'hono';
import { findMembership, type Membership } from '../accounts/queries.ts';
import { can, onlyReads, type Permission } from '../accounts/roles.ts';
import { API_KEY_SHAPE, hashApiKey } from '../api-keys/keys.ts';
import { findActiveKeyByHash, touchKey } from '../api-keys/queries.ts';
import { publicUrl } from '../config.ts';
import { ApiError, errors } from '../errors.ts';
import { cookieValues, findSession, sameToken, SESSION_COOKIE } from '../sign-in/sessions.ts';
import type { Actor, Env } from './env.ts';

/** last_used_at is written at most once a minute per key, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authentication for `/v0/*`. A bearer API key works on every host (missing, malformed, unknown
 * or revoked → 401). With `cookies` (the console host only) the session cookie works too; a key
 * wins when both are sent. A cookie-authenticated mutation must pass the CSRF checks.
 */
export function authenticate(options: { cookies?: boolean } = {}): MiddlewareHandler<Env> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (!header && options.cookies) {
      const token = cookieValues(c.req.header('cookie'), SESSION_COOKIE)[0];
      const session = await findSession(c.var.deps.db, token);
      if (!session)
        throw errors.unauthorized(
          'Sign in first, or send an API key (Authorization: Bearer ap_...).',
        );
      if (!SAFE_METHODS.has(c.req.method)) checkCsrf(c, session.csrfToken);
      c.set('actor', {
        userId: session.userId,
        email: session.email,
        apiKeyId: null,
        keyPrefix: null,
        defaultAccountId: session.defaultAccountId,
        session: { id: session.id, csrfToken: session.csrfToken, expiresAt: session.expiresAt },
      });
      return next();
    }
    if (!header) throw errors.unauthorized();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !API_KEY_SHAPE.test(match[1]!))
      throw errors.unauthorized(
        'The Authorization header must be "Bearer ap_..." with a valid API key.',
      );
    const { db } = c.var.deps;
    const key = await findActiveKeyByHash(db, hashApiKey(match[1]!));
    if (!key || key.revoked_at)
      throw errors.unauthorized('This API key is unknown or has been revoked.');
    if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
      await touchKey(db, key.id);
    }
    c.set('actor', {
      userId: key.user_id,
      email: key.email,
      apiKeyId: key.id,
      keyPrefix: key.key_prefix,
      defaultAccountId: key.default_account_id,
      session: null,
    });
    await next();
  };
}

/**
 * A browser request must come from the console itself: a cross-site Fetch Metadata or a foreign
 * Origin is refused, and so is a missing or wrong `X-Platform-CSRF` (403 `csrf_rejected`).
 */
export function checkCsrf(c: Context<Env>, expected: string): void {
  refuseCrossSite(c);
  if (!sameToken(c.req.header('x-platform-csrf'), expected)) {
    throw new ApiError(
      'csrf_rejected',
      'This request needs the X-Platform-CSRF header from GET /v0/platform/session.',
    );
  }
}

/** Refuses a browser's cross-site request to a cookie-bearing console route (403 `csrf_rejected`). */
export function refuseCrossSite(c: Context<Env>): void {
  if (c.req.header('sec-fetch-site') === 'cross-site')
    throw new ApiError('csrf_rejected', 'Cross-site requests are refused.');
  const origin = c.req.header('origin');
  const config = c.var.deps.config;
  if (origin !== undefined && origin !== publicUrl(config, config.hosts.console)) {
    throw new ApiError('csrf_rejected', `Requests from ${origin} are refused; use the console.`, {
      origin,
    });
  }
}

/** Only a console session may call this route (not an API key): the session authentication loaded. */
export function sessionOnly(c: Context<Env>): NonNullable<Actor['session']> {
  const session = c.var.actor.session;
  if (!session)
    throw errors.unauthorized('This route needs a console session (sign in at the console).');
  return session;
}

const ACCOUNT_ID = /^acct_[0-9a-z]{1,64}$/;

/**
 * The account a request acts on: `X-Platform-Account-Id` or the actor's default account.
 * Not a member → 404 (the account is not revealed); a member without `permission` → 403.
 */
export async function selectedAccount(
  c: Context<Env>,
  permission: Permission,
): Promise<Membership> {
  const header = c.req.header('x-platform-account-id');
  const actor = c.var.actor;
  const accountId = header?.trim() || actor.defaultAccountId;
  if (!accountId) throw errors.notFound('Account');
  if (header !== undefined && !ACCOUNT_ID.test(accountId)) {
    throw errors.invalid('X-Platform-Account-Id must be an account id (acct_...).', {
      fields: { 'X-Platform-Account-Id': ['must start with acct_'] },
    });
  }
  return requireRole(c, accountId, permission);
}

/**
 * Membership of `accountId` with `permission`: non-member → 404, missing role → 403, and a
 * suspended account may only read (403 `account_suspended`).
 */
export async function requireRole(
  c: Context<Env>,
  accountId: string,
  permission: Permission,
  what = 'Account',
): Promise<Membership> {
  const membership = await findMembership(c.var.deps.db, accountId, c.var.actor.userId);
  if (!membership) throw errors.notFound(what);
  if (!can(membership.role, permission)) {
    throw errors.forbidden(
      `Your role (${membership.role}) in this account does not allow ${permission}.`,
      { permission, role: membership.role },
    );
  }
  if (membership.suspended && !onlyReads(permission)) {
    throw new ApiError(
      'account_suspended',
      'This account is suspended: it can read, but not change anything. Contact the operator of this platform.',
      { account_id: accountId },
    );
  }
  return membership;
}
