import { Hono } from 'hono';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { listMemberships } from './queries.ts';
import { AccountList } from './schemas.ts';

const list = operation({
  operationId: 'listAccounts',
  summary: 'List your account memberships',
  description: '`default_account_id` is the account used when a request sends no `X-Platform-Account-Id`.',
  tags: ['Accounts'],
  responses: { 200: AccountList },
});

/** `/v0/accounts`: the accounts the actor belongs to. */
export function accountRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/', list, async (c) => {
    const actor = c.var.actor;
    const rows = await listMemberships(c.var.deps.db, actor.userId);
    const accounts = rows.map((m) => ({ id: m.id, account_id: m.id, name: m.name, owner_user_id: m.owner_user_id, role: m.role }));
    const fallback = accounts.find((a) => a.id === actor.defaultAccountId)?.id ?? accounts[0]?.id ?? null;
    return list.reply(c, 200, { accounts, default_account_id: fallback });
  });
  return r;
}
