/**
 * Every operator action goes through here, from the console, the API or `npm run admin`, so that
 * each is recorded in `operator_actions` with who took it, in the same transaction as the change
 * where the change is one statement, and right after it otherwise.
 */
import { hostname, userInfo } from 'node:os';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { setBillingState, setFlag, setPlan } from '../plans/operator.ts';
import { findUserByEmail } from '../users/service.ts';
import { grantOperator, recordAction, revokeOperator } from './queries.ts';

export type OperatorActor = { userId: string | null; label: string };

/** The admin command runs as whoever can reach the database: say which OS user on which host. */
export function adminCommandActor(): OperatorActor {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {}
  return { userId: null, label: `admin command (${user}@${hostname()})` };
}

export async function operatorSetPlan(
  deps: Deps,
  actor: OperatorActor,
  input: { accountId: string; planKey: string; force?: boolean },
) {
  const result = await setPlan(deps, input);
  await recordAction(deps.db, {
    actorUserId: actor.userId,
    actorLabel: actor.label,
    action: 'set_plan',
    accountId: input.accountId,
    detail: {
      plan_key: result.plan_key,
      previous_plan_key: result.previous_plan_key,
      forced: !!input.force,
      actions: result.actions.length,
    },
  });
  return result;
}

export async function operatorSetFlag(
  deps: Deps,
  actor: OperatorActor,
  input: { accountId?: string; appId?: string; flag: string; reason?: string; clear: boolean },
) {
  const result = await setFlag(deps, input);
  await recordAction(deps.db, {
    actorUserId: actor.userId,
    actorLabel: actor.label,
    action: input.clear ? 'clear_flag' : 'set_flag',
    accountId: input.accountId ?? null,
    appId: input.appId ?? null,
    detail: {
      flag: input.flag,
      ...(input.clear ? { cleared: 'cleared' in result && result.cleared } : {}),
      ...(input.reason && !input.clear ? { reason: input.reason.trim() } : {}),
    },
  });
  return result;
}

export async function operatorSetBillingState(
  deps: Deps,
  actor: OperatorActor,
  input: { accountId: string; state: string; graceDays?: number },
) {
  const result = await setBillingState(deps, input);
  await recordAction(deps.db, {
    actorUserId: actor.userId,
    actorLabel: actor.label,
    action: 'set_billing_state',
    accountId: input.accountId,
    detail: { state: result.billing_access_state, grace_ends_at: result.grace_ends_at },
  });
  return result;
}

/** Names (or un-names) the user with `email` an operator. */
export async function operatorGrant(
  deps: Deps,
  actor: OperatorActor,
  input: { email: string; revoke?: boolean },
) {
  const user = await findUserByEmail(deps.db, input.email.trim().toLowerCase());
  if (!user) throw new ApiError('not_found', `No user has the e-mail address ${input.email}.`);
  const changed = input.revoke
    ? await revokeOperator(deps.db, user.id)
    : await grantOperator(deps.db, user.id, actor.userId ?? actor.label);
  await recordAction(deps.db, {
    actorUserId: actor.userId,
    actorLabel: actor.label,
    action: input.revoke ? 'revoke_operator' : 'grant_operator',
    detail: { user_id: user.id, email: user.email, changed },
  });
  return { user_id: user.id, email: user.email, operator: !input.revoke, changed };
}
