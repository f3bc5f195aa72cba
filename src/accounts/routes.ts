import { Hono } from 'hono';
import type { Env } from '../http/env.ts';
import { describe } from '../http/validate.ts';
import { listMemberships } from './queries.ts';

/** `/v0/accounts`: the accounts the actor belongs to. */
export function accountRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/', describe({ summary: 'List your account memberships', tags: ['Accounts'] }), async (c) => {
    const actor = c.var.actor;
    const rows = await listMemberships(c.var.deps.db, actor.userId);
    const accounts = rows.map((m) => ({ id: m.id, account_id: m.id, name: m.name, owner_user_id: m.owner_user_id, role: m.role }));
    const fallback = accounts.find((a) => a.id === actor.defaultAccountId)?.id ?? accounts[0]?.id ?? null;
    return c.json({ accounts, default_account_id: fallback });
  });
  return r;
}
