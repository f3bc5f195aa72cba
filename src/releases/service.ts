import { evaluateActivation, goLive, type Who } from '../apps/service.ts';
import { manifestOf } from '../manifest/stored.ts';
import { appOrigin } from '../apps/mappers.ts';
import { findRelease, lockApp } from '../apps/queries.ts';
import type { Deps } from '../deps.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';

/**
 * Moves the live pointer to a retained release that was live before and is still compatible
 * with what is provisioned. Data, secrets, files, jobs and events are untouched.
 */
export async function rollback(deps: Deps, appId: string, releaseId: string, who: Who) {
  const result = await deps.db.transaction().execute(async (trx) => {
    const app = await lockApp(trx, appId);
    if (app.deleted_at)
      throw errors.conflict('The app is unpublished; publish a release to bring it back.');
    const target = await findRelease(trx, app.id, releaseId);
    if (!target) throw errors.notFound('Release');
    if (target.id === app.live_release_id)
      throw errors.conflict('That release is already live.', { release_id: target.id });
    if (!target.activated_at) {
      throw errors.conflict(
        `Only a release that was live before can be rolled back to; this one is ${target.activation_status}.`,
        {
          release_id: target.id,
          activation_status: target.activation_status,
        },
      );
    }
    const manifest = manifestOf(target.manifest);
    const evaluation = await evaluateActivation(trx, app.id, manifest);
    if (evaluation.status === 'requires_migration') {
      throw new ApiError(
        'requires_migration',
        'That release is incompatible with the resources provisioned since.',
        { reasons: evaluation.reasons },
      );
    }
    if (evaluation.status === 'pending_secrets') {
      throw new ApiError('pending_secrets', 'That release needs secrets that are not set.', {
        missing_secrets: evaluation.missing,
      });
    }
    const previous = app.live_release_id;
    const events = await goLive(trx, app, { id: target.id, manifest }, evaluation, who);
    events.push({
      app_id: app.id,
      account_id: app.account_id,
      type: 'release.rolled_back',
      severity: 'warn',
      message: `Rolled back to release ${target.id}.`,
      metadata: { from_release_id: previous, to_release_id: target.id },
      release_id: target.id,
      api_key_id: who.actor.apiKeyId,
      request_id: who.requestId,
    });
    await recordEvents(trx, events);
    return {
      app_id: app.id,
      release_id: target.id,
      previous_release_id: previous,
      origin: appOrigin(deps.config, app.id),
      status: 'rolled_back' as const,
    };
  });
  deps.signals.appChanged(appId);
  return result;
}
