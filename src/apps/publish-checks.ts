/**
 * What refuses a publish, whatever its bundle's bytes: a preview with no live app beside it, an
 * account over its plan's app count, bundle or webhook limits. Read once before the bytes are
 * stored (so a refused publish stores none) and again under the app and account row locks (where
 * the answer is exact).
 */
import type { Config } from '../config.ts';
import type { Executor } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import type { ValidBundle } from '../manifest/validate.ts';
import { planOf } from '../plans/catalogue.ts';
import { checkBundle, checkNewApp, checkNewWebhooks } from '../plans/enforce.ts';
import { accountPlanRow, countLiveApps } from '../plans/queries.ts';
import { type AppRow, appRow, provisionedResources } from './queries.ts';
import { toStates } from './mappers.ts';

export async function checkPublishable(
  db: Executor,
  config: Pick<Config, 'plans'>,
  target: { accountId: string; appId?: string },
  bundle: ValidBundle,
  mode: { preview: boolean; lock: boolean },
): Promise<{
  existing: AppRow | undefined;
  account: NonNullable<Awaited<ReturnType<typeof accountPlanRow>>>;
}> {
  const existing = target.appId ? await appRow(db, target.appId, { lock: mode.lock }) : undefined;
  if (mode.preview && !existing)
    throw new ApiError(
      'invalid_request',
      'A preview is published beside a live app: publish the first release without --preview.',
    );
  if (mode.preview && existing?.deleted_at)
    throw new ApiError(
      'conflict',
      'The app is unpublished; publish a release (without --preview) to bring it back.',
    );
  // One more published app (new, or a tombstoned one back): the account row lock makes the count exact.
  const grows = !existing || existing.deleted_at !== null;
  const account = await accountPlanRow(db, target.accountId, { lock: mode.lock && grows });
  if (!account) throw new ApiError('not_found', 'Account not found.');
  const plan = planOf(config.plans, account.plan_key);
  if (grows) checkNewApp(config.plans, plan, await countLiveApps(db, target.accountId));
  checkBundle(config.plans, plan, bundle);
  checkNewWebhooks(
    config.plans,
    plan,
    account,
    bundle.manifest,
    existing ? toStates(await provisionedResources(db, existing.id)) : [],
  );
  return { existing, account };
}
