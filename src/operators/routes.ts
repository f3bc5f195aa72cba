/**
 * `/v0/operator/*`: the server's operators run it from here (the console's Operator section uses
 * these routes). Every other signed-in user gets 403, whatever their role in any account.
 */
import { Hono } from 'hono';
import type { Env } from '../http/env.ts';
import { mark, operation } from '../http/operation.ts';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import { ApiError, errors } from '../errors.ts';
import { APP_ID } from '../lib/ids.ts';
import {
  operatorSetBillingState,
  operatorSetFlag,
  operatorSetPlan,
  type OperatorActor,
} from './actions.ts';
import { operatorAccountApps, operatorAccounts, serverHealth } from './overview.ts';
import { isOperator, listActions, listOperators } from './queries.ts';
import { listBackupRuns, queueConsoleBackup, restoreCommandFor } from '../backups/runs.ts';
import {
  AccountsQuery,
  ActionsQuery,
  BackupOverview,
  BackupRunRecord,
  BillingStateRequest,
  FlagRequest,
  OperatorAccountList,
  OperatorActionList,
  OperatorAppList,
  OperatorList,
  OperatorBillingStateResult,
  OperatorFlagResult,
  OperatorPlanResult,
  ServerHealth,
  SetPlanRequest,
} from './schemas.ts';
import { timeIdCursor } from '../http/paging.ts';

const tags = ['Operator'];
const ACCOUNT = /^acct_[0-9a-z]{1,64}$/;

/** Refuses everyone but an operator (403), before anything is read. */
const operatorsOnly = mark(
  async (c, next) => {
    if (!(await isOperator(c.var.deps.db, c.var.actor.userId)))
      throw errors.forbidden(
        "Only this server's operators can use the operator routes; an operator names others with `npm run admin -- grant-operator`.",
      );
    await next();
  },
  { errors: ['forbidden'] },
);

const actorOf = (c: { var: Env['Variables'] }): OperatorActor => {
  const a = c.var.actor;
  return {
    userId: a.userId,
    label: a.session ? `${a.email} (console)` : `${a.email} (API key ${a.keyPrefix}…)`,
  };
};

const accountParam = mark(
  async (c, next) => {
    if (!ACCOUNT.test(c.req.param('account_id') ?? '')) throw errors.notFound('Account');
    await next();
  },
  { errors: ['not_found'] },
);
const appParam = mark(
  async (c, next) => {
    if (!APP_ID.test(c.req.param('app_id') ?? '')) throw errors.notFound('App');
    await next();
  },
  { errors: ['not_found'] },
);

const listAccounts = operation({
  operationId: 'operatorListAccounts',
  summary: 'Every account on the server, newest first, with its plan, usage and flags',
  description:
    "`q` matches an account id exactly, or part of its name or of a member's e-mail. `requests_this_month` is the metered count of this calendar month; `stored_bytes` the release and file bytes the account stores.",
  tags,
  responses: { 200: OperatorAccountList },
});
const accountApps = operation({
  operationId: 'operatorListAccountApps',
  summary: "An account's apps (the 200 newest, unpublished ones too) with their flags",
  tags,
  responses: { 200: OperatorAppList },
});
const setPlan = operation({
  operationId: 'operatorSetPlan',
  summary:
    'Put an account on a plan (entitlement source `manual`; `free` sets it back to `default`)',
  description:
    'A downgrade the account does not fit is refused with 409 `downgrade_incompatible` unless `force`: then routes over the limits are disabled, nothing is deleted. Recorded in the operator actions.',
  tags,
  responses: { 200: OperatorPlanResult },
  errors: ['downgrade_incompatible'],
});
const setAccountFlag = operation({
  operationId: 'operatorSuspendAccount',
  summary: 'Suspend an account: it can read, not change anything; its apps answer 403',
  description: 'The reason shows in the account status. Recorded in the operator actions.',
  tags,
  responses: { 200: OperatorFlagResult },
});
const clearAccountFlag = operation({
  operationId: 'operatorLiftAccountSuspension',
  summary: "Lift an account's suspension",
  tags,
  responses: { 200: OperatorFlagResult },
});
const setAppFlag = operation({
  operationId: 'operatorFlagApp',
  summary: 'Suspend an app (403) or take it down (451)',
  description: '`flag` is `suspended` or `takedown`. Recorded in the operator actions.',
  tags,
  responses: { 200: OperatorFlagResult },
});
const clearAppFlag = operation({
  operationId: 'operatorClearAppFlag',
  summary: "Lift an app's suspension or takedown",
  tags,
  responses: { 200: OperatorFlagResult },
});
const billingState = operation({
  operationId: 'operatorSetBillingState',
  summary: 'Billing access for an account billed by hand',
  description:
    '`past_due_grace` keeps apps online and blocks new paid features until `grace_days` (default 7) have passed.',
  tags,
  responses: { 200: OperatorBillingStateResult },
});
const health = operation({
  operationId: 'operatorServerHealth',
  summary: "The server's health: nodes, job workers, the job queue, the blob store, Postgres",
  description:
    'A node or worker is `live` while its heartbeat is under 30 s old. `jobs.failed` counts jobs that used up their attempts; `oldest_ready_seconds` is how long the oldest runnable job has waited.',
  tags,
  responses: { 200: ServerHealth },
});
const actions = operation({
  operationId: 'operatorListActions',
  summary: 'What operators did, newest first, with who did it',
  description:
    'From the console, the API and `npm run admin` alike; `actor_label` names an admin command by its OS user and host.',
  tags,
  responses: { 200: OperatorActionList },
});
const backups = operation({
  operationId: 'operatorListBackups',
  summary: 'Backups, newest first (when, size, result), where they go and how to restore one',
  description:
    'The 50 newest, from the schedule (`PLATFORM_BACKUP_SCHEDULE`), the console and `npm run admin -- backup` alike. `restore_command` is what to run, with the service stopped, on an empty data dir; a backup of an S3 location restores with `s3:<name>`.',
  tags,
  responses: { 200: BackupOverview },
});
const startBackup = operation({
  operationId: 'operatorStartBackup',
  summary: 'Take a backup now',
  description:
    'Queued for the job worker, which writes it where scheduled backups go and keeps the newest `PLATFORM_BACKUP_KEEP`. Answers the queued run; `GET /v0/operator/backups` follows it to `succeeded` or `failed`. Recorded in the operator actions.',
  tags,
  responses: { 202: BackupRunRecord },
});
const operators = operation({
  operationId: 'operatorList',
  summary: "The server's operators",
  tags,
  responses: { 200: OperatorList },
});

function flagName(raw: string | undefined, allowed: readonly string[]): string {
  if (!raw || !allowed.includes(raw))
    throw new ApiError('not_found', `No such flag; flags here are ${allowed.join(', ')}.`);
  return raw;
}

export function operatorRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/accounts', listAccounts, operatorsOnly, query(AccountsQuery), async (c) => {
    const q = queryOf(c, AccountsQuery);
    const page = await operatorAccounts(c.var.deps, {
      limit: q.limit ?? 50,
      q: q.q,
      after: q.cursor ? timeIdCursor.decode(q.cursor) : undefined,
    });
    return listAccounts.reply(c, 200, {
      accounts: page.accounts,
      cursor: page.next ? timeIdCursor.encode(page.next) : null,
    });
  });

  r.get('/accounts/:account_id/apps', accountApps, operatorsOnly, accountParam, async (c) => {
    const apps = await operatorAccountApps(c.var.deps, c.req.param('account_id'));
    if (!apps) throw errors.notFound('Account');
    return accountApps.reply(c, 200, { apps });
  });

  r.put(
    '/accounts/:account_id/plan',
    setPlan,
    operatorsOnly,
    accountParam,
    jsonBody(SetPlanRequest),
    async (c) => {
      const body = bodyOf(c, SetPlanRequest);
      const result = await operatorSetPlan(c.var.deps, actorOf(c), {
        accountId: c.req.param('account_id'),
        planKey: body.plan,
        force: body.force,
      });
      return setPlan.reply(c, 200, result);
    },
  );

  r.put(
    '/accounts/:account_id/billing-state',
    billingState,
    operatorsOnly,
    accountParam,
    jsonBody(BillingStateRequest),
    async (c) => {
      const body = bodyOf(c, BillingStateRequest);
      const result = await operatorSetBillingState(c.var.deps, actorOf(c), {
        accountId: c.req.param('account_id'),
        state: body.state,
        graceDays: body.grace_days,
      });
      return billingState.reply(c, 200, result);
    },
  );

  r.put(
    '/accounts/:account_id/flags/:flag',
    setAccountFlag,
    operatorsOnly,
    accountParam,
    jsonBody(FlagRequest),
    async (c) => {
      const result = await operatorSetFlag(c.var.deps, actorOf(c), {
        accountId: c.req.param('account_id'),
        flag: flagName(c.req.param('flag'), ['suspended']),
        reason: bodyOf(c, FlagRequest).reason,
        clear: false,
      });
      return setAccountFlag.reply(c, 200, result);
    },
  );

  r.delete(
    '/accounts/:account_id/flags/:flag',
    clearAccountFlag,
    operatorsOnly,
    accountParam,
    async (c) => {
      const result = await operatorSetFlag(c.var.deps, actorOf(c), {
        accountId: c.req.param('account_id'),
        flag: flagName(c.req.param('flag'), ['suspended']),
        clear: true,
      });
      return clearAccountFlag.reply(c, 200, result);
    },
  );

  r.put(
    '/apps/:app_id/flags/:flag',
    setAppFlag,
    operatorsOnly,
    appParam,
    jsonBody(FlagRequest),
    async (c) => {
      const result = await operatorSetFlag(c.var.deps, actorOf(c), {
        appId: c.req.param('app_id'),
        flag: flagName(c.req.param('flag'), ['suspended', 'takedown']),
        reason: bodyOf(c, FlagRequest).reason,
        clear: false,
      });
      return setAppFlag.reply(c, 200, result);
    },
  );

  r.delete('/apps/:app_id/flags/:flag', clearAppFlag, operatorsOnly, appParam, async (c) => {
    const result = await operatorSetFlag(c.var.deps, actorOf(c), {
      appId: c.req.param('app_id'),
      flag: flagName(c.req.param('flag'), ['suspended', 'takedown']),
      clear: true,
    });
    return clearAppFlag.reply(c, 200, result);
  });

  r.get('/health', health, operatorsOnly, async (c) => {
    return health.reply(c, 200, await serverHealth(c.var.deps));
  });

  r.get('/actions', actions, operatorsOnly, query(ActionsQuery), async (c) => {
    const q = queryOf(c, ActionsQuery);
    const limit = q.limit ?? 50;
    const rows = await listActions(
      c.var.deps.db,
      limit,
      q.cursor === undefined ? undefined : Number(q.cursor),
    );
    const page = rows.slice(0, limit);
    return actions.reply(c, 200, {
      actions: page.map((a) => ({
        id: a.id,
        at: a.at.toISOString(),
        actor_user_id: a.actor_user_id,
        actor_email: a.actor_email,
        actor_label: a.actor_label,
        action: a.action,
        account_id: a.account_id,
        app_id: a.app_id,
        detail: (a.detail ?? {}) as Record<string, unknown>,
      })),
      cursor: rows.length > limit ? String(page.at(-1)!.seq) : null,
    });
  });

  r.get('/backups', backups, operatorsOnly, async (c) => {
    const { config, db } = c.var.deps;
    return backups.reply(c, 200, {
      backups: await listBackupRuns(db),
      to: config.backups.to,
      keep: config.backups.keep,
      schedule: config.backups.schedule ?? null,
      restore_command: restoreCommandFor(config),
    });
  });

  r.post('/backups', startBackup, operatorsOnly, async (c) => {
    const { db } = c.var.deps;
    const actor = actorOf(c);
    const id = await queueConsoleBackup(db, actor);
    const [run] = await listBackupRuns(db, 1, id);
    return startBackup.reply(c, 202, run!);
  });

  r.get('/operators', operators, operatorsOnly, async (c) => {
    const rows = await listOperators(c.var.deps.db);
    return operators.reply(c, 200, {
      operators: rows.map((o) => ({ ...o, granted_at: o.granted_at.toISOString() })),
    });
  });

  return r;
}
