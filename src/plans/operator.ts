/**
 * What the operator does by hand (`npm run admin -- set-plan | flag | billing-state`): assign a
 * plan (entitlement source `manual`; Free goes back to `default`), suspend or take down, and set
 * billing access for accounts billed outside Stripe.
 */
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { findApp } from '../apps/queries.ts';
import { isPlanKey, PLAN_KEYS } from './catalogue.ts';
import { changePlan } from './change.ts';
import {
  accountPlanRow,
  clearAccountFlag,
  clearAppFlag,
  setAccountFlag,
  setAppFlag,
  setBillingAccess,
} from './queries.ts';

export async function setPlan(
  deps: Deps,
  input: { accountId: string; planKey: string; force?: boolean },
) {
  if (!isPlanKey(input.planKey))
    throw new ApiError(
      'invalid_request',
      `Unknown plan "${input.planKey}"; plans are ${PLAN_KEYS.join(', ')}.`,
    );
  const change = await changePlan(deps, {
    accountId: input.accountId,
    planKey: input.planKey,
    source: input.planKey === 'free' ? 'default' : 'manual',
    refuse: !input.force,
  });
  return {
    account_id: input.accountId,
    plan_key: input.planKey,
    previous_plan_key: change.previous_plan_key,
    compatible: change.compatible,
    violations: change.violations,
    actions: change.actions,
  };
}

export async function setFlag(
  deps: Deps,
  input: { accountId?: string; appId?: string; flag: string; reason?: string; clear: boolean },
) {
  if (!!input.accountId === !!input.appId)
    throw new ApiError('invalid_request', 'Name either --account or --app.');
  if (input.accountId) {
    if (input.flag !== 'suspended')
      throw new ApiError('invalid_request', 'An account flag is "suspended".');
    if (!(await accountPlanRow(deps.db, input.accountId)))
      throw new ApiError('not_found', 'Account not found.');
    if (input.clear) {
      const cleared = await clearAccountFlag(deps.db, input.accountId, 'suspended');
      deps.signals.accountChanged(input.accountId);
      return { account_id: input.accountId, flag: input.flag, cleared: cleared > 0 };
    }
    await setAccountFlag(deps.db, input.accountId, 'suspended', needReason(input.reason));
    deps.signals.accountChanged(input.accountId);
    return { account_id: input.accountId, flag: input.flag, set: true };
  }
  const appId = input.appId!;
  if (input.flag !== 'suspended' && input.flag !== 'takedown')
    throw new ApiError('invalid_request', 'An app flag is "suspended" or "takedown".');
  if (!(await findApp(deps.db, appId))) throw new ApiError('not_found', 'App not found.');
  if (input.clear) {
    const cleared = await clearAppFlag(deps.db, appId, input.flag);
    deps.signals.appChanged(appId);
    return { app_id: appId, flag: input.flag, cleared: cleared > 0 };
  }
  await setAppFlag(deps.db, appId, input.flag, needReason(input.reason));
  deps.signals.appChanged(appId);
  return { app_id: appId, flag: input.flag, set: true };
}

function needReason(reason: string | undefined): string {
  const r = reason?.trim();
  if (!r)
    throw new ApiError(
      'invalid_request',
      'Give a --reason: the account owner sees it in the account status.',
    );
  if (r.length > 500) throw new ApiError('invalid_request', 'Keep --reason under 500 characters.');
  return r;
}

const STATES = ['active', 'past_due_grace', 'restricted'] as const;

/** Billing access by hand; `past_due_grace` records when the grace ends (`graceDays`, default 7). */
export async function setBillingState(
  deps: Deps,
  input: { accountId: string; state: string; graceDays?: number; now?: Date },
) {
  const state = STATES.find((s) => s === input.state);
  if (!state)
    throw new ApiError('invalid_request', `Billing access is one of ${STATES.join(', ')}.`);
  if (!(await accountPlanRow(deps.db, input.accountId)))
    throw new ApiError('not_found', 'Account not found.');
  const days = input.graceDays ?? 7;
  if (!Number.isInteger(days) || days < 1 || days > 90)
    throw new ApiError('invalid_request', '--grace-days is a whole number from 1 to 90.');
  const graceEndsAt =
    state === 'past_due_grace'
      ? new Date((input.now ?? new Date()).getTime() + days * 86_400_000)
      : null;
  await setBillingAccess(deps.db, input.accountId, state, graceEndsAt);
  deps.signals.accountChanged(input.accountId);
  return {
    account_id: input.accountId,
    billing_access_state: state,
    grace_ends_at: graceEndsAt?.toISOString() ?? null,
  };
}
