import type { MiddlewareHandler } from 'hono';
import { PERMISSIONS, ROLES, type Permission } from '../accounts/roles.ts';
import { errors } from '../errors.ts';
import { requireRole } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { mark } from '../http/operation.ts';
import { findApp } from './queries.ts';

export const APP_ID = /^[a-z0-9]{12,24}$/;

/**
 * Loads `:app_id` and authorises the actor against the app's owning account (never the
 * account header): unknown app or non-member → 404, member without `permission` → 403.
 */
export function appAccess(permission: Permission): MiddlewareHandler<Env> {
  const everyRole = ROLES.every((role) => (PERMISSIONS[permission] as readonly string[]).includes(role));
  return mark(async (c, next) => {
    const appId = c.req.param('app_id') ?? '';
    if (!APP_ID.test(appId)) throw errors.notFound('App');
    const app = await findApp(c.var.deps.db, appId);
    if (!app) throw errors.notFound('App');
    c.set('membership', await requireRole(c, app.account_id, permission, 'App'));
    c.set('app', app);
    await next();
  }, { errors: everyRole ? ['not_found'] : ['not_found', 'forbidden'] });
}
