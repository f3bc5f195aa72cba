import { onlyReads, type Permission } from './roles.ts';
import { errors } from '../errors.ts';
import { requireRole } from '../http/auth.ts';
import { mark } from '../http/operation.ts';

const ACCOUNT = /^acct_[0-9a-z]{1,64}$/;

/** Loads `:account_id` for a member with `permission`: non-member 404, missing role 403. */
export function accountAccess(permission: Permission | null) {
  return mark(
    async (c, next) => {
      const id = c.req.param('account_id') ?? '';
      if (!ACCOUNT.test(id)) throw errors.notFound('Account');
      c.set('membership', await requireRole(c, id, permission ?? 'account.read'));
      await next();
    },
    {
      errors: permission
        ? [
            'not_found',
            'forbidden',
            ...(onlyReads(permission) ? [] : (['account_suspended'] as const)),
          ]
        : ['not_found'],
    },
  );
}
