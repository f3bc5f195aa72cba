/** `/v0/accounts/:account_id/status`, `/limits` and `/downgrade-preview`: an account's standing (members with account.read). */
import { Hono } from 'hono';
import { accountAccess } from '../accounts/access.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { query, queryOf } from '../http/validate.ts';
import type { RequestMeter } from '../usage/meter.ts';
import { planOf } from './catalogue.ts';
import { planChangeFor } from './change.ts';
import { AccountLimits, AccountStatus, DowngradePreview, DowngradeQuery } from './schemas.ts';
import { limitsRecord, readStanding, statusRecord } from './standing.ts';

const tags = ['Plans'];
const status = operation({
  operationId: 'getAccountStatus',
  summary: "An account's plan, billing access, flags, usage against its limits and warnings",
  description:
    '`usage` and `limits` are keyed by metric (`apps`, `requests.monthly`, `app_slugs`, `custom_domains`). `restricted` is true while billing is not active, the monthly request quota is used up, or the account is over its plan (`compatibility_warnings`). `warnings` start at 80% of a limit.',
  tags,
  responses: { 200: AccountStatus },
});
const limits = operation({
  operationId: 'getAccountLimits',
  summary: "An account's plan features and limits, grouped, with its usage",
  tags,
  responses: { 200: AccountLimits },
});
const preview = operation({
  operationId: 'previewDowngrade',
  summary: 'What moving the account to `plan` would do',
  description:
    'Exactly what the change would do: `violations` of the target plan, and `actions` (alias routes over the target limits are disabled, newest first, never deleted). `compatible` is false when something cannot be fixed by disabling (more apps, files, collections or webhooks than allowed); such a change is refused with 409 `downgrade_incompatible` where it can be.',
  tags,
  responses: { 200: DowngradePreview },
});

export function planRoutes(options: { meter?: RequestMeter } = {}): Hono<Env> {
  const r = new Hono<Env>();
  const pending = (accountId: string) => options.meter?.pending(accountId) ?? 0;

  r.get('/:account_id/status', status, accountAccess('account.read'), async (c) => {
    const id = c.var.membership.id;
    return status.reply(
      c,
      200,
      statusRecord(c.var.deps, await readStanding(c.var.deps, id, pending(id))),
    );
  });

  r.get('/:account_id/limits', limits, accountAccess('account.read'), async (c) => {
    const id = c.var.membership.id;
    return limits.reply(c, 200, limitsRecord(await readStanding(c.var.deps, id, pending(id))));
  });

  r.get(
    '/:account_id/downgrade-preview',
    preview,
    accountAccess('account.read'),
    query(DowngradeQuery),
    async (c) => {
      const { plan } = queryOf(c, DowngradeQuery);
      const m = c.var.membership;
      const change = await planChangeFor(c.var.deps.db, c.var.deps.config.plans, m.id, plan);
      return preview.reply(c, 200, {
        account_id: m.id,
        current_plan_key: planOf(c.var.deps.config.plans, m.plan_key).key,
        target_plan_key: plan,
        ...change,
      });
    },
  );

  return r;
}
