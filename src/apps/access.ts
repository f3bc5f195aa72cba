import type { MiddlewareHandler } from 'hono';
import { onlyReads, PERMISSIONS, ROLES, type Permission } from '../accounts/roles.ts';
import { ApiError, errors } from '../errors.ts';
import { appFlagNames } from '../plans/queries.ts';
import { requireRole } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { mark } from '../http/operation.ts';
import { findApp } from './queries.ts';

import { APP_ID } from '../lib/ids.ts';
export { APP_ID };

/**
 * Loads `:app_id` and authorises the actor against the app's owning account (never the
 * account header): unknown app or non-member → 404, member without `permission` → 403.
 */
export function appAccess(permission: Permission): MiddlewareHandler<Env> {
  const everyRole = ROLES.every((role) =>
    (PERMISSIONS[permission] as readonly string[]).includes(role),
  );
  return mark(
    async (c, next) => {
      const appId = c.req.param('app_id') ?? '';
      if (!APP_ID.test(appId)) throw errors.notFound('App');
      const app = await findApp(c.var.deps.db, appId);
      if (!app) throw errors.notFound('App');
      c.set('membership', await requireRole(c, app.account_id, permission, 'App'));
      if (!onlyReads(permission)) refuseFlagged(app.id, await appFlagNames(c.var.deps.db, app.id));
      c.set('app', app);
      await next();
    },
    {
      errors: [
        ...(everyRole ? ['not_found' as const] : ['not_found' as const, 'forbidden' as const]),
        ...(onlyReads(permission)
          ? []
          : (['account_suspended', 'app_suspended', 'app_takedown'] as const)),
      ],
    },
  );
}

/** A taken-down (451) or suspended (403) app can be read, not changed. */
function refuseFlagged(appId: string, flags: string[]): void {
  if (flags.includes('takedown'))
    throw new ApiError(
      'app_takedown',
      'This app is taken down for legal reasons: it can be read, not changed. Contact the operator of this platform.',
      { app_id: appId },
    );
  if (flags.includes('suspended'))
    throw new ApiError(
      'app_suspended',
      'This app is suspended: it can be read, not changed. Contact the operator of this platform.',
      { app_id: appId },
    );
}
