import type { Context, MiddlewareHandler } from 'hono';
import { findMembership, type Membership } from '../accounts/queries.ts';
import { can, type Permission } from '../accounts/roles.ts';
import { API_KEY_SHAPE, hashApiKey } from '../api-keys/keys.ts';
import { findActiveKeyByHash, touchKey } from '../api-keys/queries.ts';
import { errors } from '../errors.ts';
import type { Env } from './env.ts';

/** last_used_at is written at most once a minute per key, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;

/** Bearer API-key authentication for `/v0/*`: missing, malformed, unknown or revoked → 401. */
export function authenticate(): MiddlewareHandler<Env> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (!header) throw errors.unauthorized();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !API_KEY_SHAPE.test(match[1]!)) throw errors.unauthorized('The Authorization header must be "Bearer ap_..." with a valid API key.');
    const { db } = c.var.deps;
    const key = await findActiveKeyByHash(db, hashApiKey(match[1]!));
    if (!key || key.revoked_at) throw errors.unauthorized('This API key is unknown or has been revoked.');
    if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
      await touchKey(db, key.id);
    }
    c.set('actor', {
      userId: key.user_id,
      email: key.email,
      apiKeyId: key.id,
      keyPrefix: key.key_prefix,
      defaultAccountId: key.default_account_id,
    });
    await next();
  };
}

const ACCOUNT_ID = /^acct_[0-9a-z]{1,64}$/;

/**
 * The account a request acts on: `X-Platform-Account-Id` or the actor's default account.
 * Not a member → 404 (the account is not revealed); a member without `permission` → 403.
 */
export async function selectedAccount(c: Context<Env>, permission: Permission): Promise<Membership> {
  const header = c.req.header('x-platform-account-id');
  const actor = c.var.actor;
  const accountId = header?.trim() || actor.defaultAccountId;
  if (!accountId) throw errors.notFound('Account');
  if (header !== undefined && !ACCOUNT_ID.test(accountId)) {
    throw errors.invalid('X-Platform-Account-Id must be an account id (acct_...).', { fields: { 'X-Platform-Account-Id': ['must start with acct_'] } });
  }
  return requireRole(c, accountId, permission);
}

/** Membership of `accountId` with `permission`: non-member → 404, missing role → 403. */
export async function requireRole(c: Context<Env>, accountId: string, permission: Permission, what = 'Account'): Promise<Membership> {
  const membership = await findMembership(c.var.deps.db, accountId, c.var.actor.userId);
  if (!membership) throw errors.notFound(what);
  if (!can(membership.role, permission)) {
    throw errors.forbidden(`Your role (${membership.role}) in this account does not allow ${permission}.`, { permission, role: membership.role });
  }
  return membership;
}
