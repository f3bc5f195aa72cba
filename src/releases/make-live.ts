/**
 * Making a preview the live release: the checks a publish makes, again, now (the plan's limits, the
 * resources provisioned since, the secrets set since; the module was checked when the preview was
 * published and releases are immutable), then the live pointer moves as a publish moves it.
 */
import { fitsNow, switchTarget } from './switch.ts';
import { appOrigin } from '../apps/mappers.ts';
import { provisionedResources } from '../apps/queries.ts';
import { endPreview, releaseFileCount } from './records.ts';
import type { PublishAppResponse } from '../apps/schemas.ts';
import { goLive, type Who } from '../apps/service.ts';
import { toStates } from '../apps/mappers.ts';
import type { Deps } from '../deps.ts';
import { errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import { manifestOf } from '../manifest/stored.ts';
import { planOf } from '../plans/catalogue.ts';
import { checkBundle, checkNewWebhooks } from '../plans/enforce.ts';
import { accountPlanRow } from '../plans/queries.ts';

export async function makePreviewLive(
  deps: Deps,
  appId: string,
  releaseId: string,
  who: Who,
): Promise<PublishAppResponse> {
  const result = await deps.db.transaction().execute(async (trx) => {
    const { app, target } = await switchTarget(trx, appId, releaseId);
    if (!target.preview)
      throw errors.conflict(
        'Only a preview is made live this way: roll back to a release that was live, or publish.',
        { release_id: target.id },
      );
    if (target.activation_status !== 'inactive')
      throw errors.conflict(
        target.activation_status === 'pending_secrets'
          ? 'That preview is waiting for secrets: set them and publish it again.'
          : `That preview cannot go live: it is ${target.activation_status}.`,
        { release_id: target.id, activation_status: target.activation_status },
      );
    const manifest = manifestOf(target.manifest);
    const account = await accountPlanRow(trx, app.account_id);
    if (!account) throw errors.notFound('Account');
    const plan = planOf(deps.config.plans, account.plan_key);
    const files = await releaseFileCount(trx, target.id);
    checkBundle(deps.config.plans, plan, { files: new Array(files), manifest });
    checkNewWebhooks(
      deps.config.plans,
      plan,
      account,
      manifest,
      toStates(await provisionedResources(trx, app.id)),
    );
    const evaluation = await fitsNow(trx, app, manifest, 'That preview');
    const previous = app.live_release_id;
    // once live it is a release like any other (rolled back to, not previewed)
    await endPreview(trx, target.id);
    const events = await goLive(trx, app, { id: target.id, manifest }, evaluation, who);
    events.push({
      app_id: app.id,
      account_id: app.account_id,
      type: 'release.activated',
      message: 'Preview made live.',
      metadata: { previous_release_id: previous, preview: true },
      release_id: target.id,
      api_key_id: who.actor.apiKeyId,
      request_id: who.requestId,
    });
    await recordEvents(trx, events);
    return {
      status: 'published' as const,
      app_id: app.id,
      account_id: app.account_id,
      release_id: target.id,
      origin: appOrigin(deps.config, app.id),
      previous_release_id: previous,
      activation: {
        status: 'live' as const,
        reasons: [],
        missing_secrets: [],
        previous_release_id: previous,
      },
    };
  });
  deps.signals.appChanged(appId);
  return result;
}
