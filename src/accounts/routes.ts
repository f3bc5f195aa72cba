import { Hono } from 'hono';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { membershipList } from './queries.ts';
import { AccountList } from './schemas.ts';

const list = operation({
  operationId: 'listAccounts',
  summary: 'List your account memberships',
  description:
    '`default_account_id` is the account used when a request sends no `X-Platform-Account-Id`.',
  tags: ['Accounts'],
  responses: { 200: AccountList },
});

/** `/v0/accounts`: the accounts the actor belongs to. */
export function accountRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/', list, async (c) => {
    const actor = c.var.actor;
    return list.reply(
      c,
      200,
      await membershipList(c.var.deps.db, actor.userId, actor.defaultAccountId),
    );
  });
  return r;
}
