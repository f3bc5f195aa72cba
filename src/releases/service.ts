import { fitsNow, switchTarget } from './switch.ts';
import { goLive, type Who } from '../apps/service.ts';
import { manifestOf } from '../manifest/stored.ts';
import { appOrigin } from '../apps/mappers.ts';
import type { Deps } from '../deps.ts';
import { errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import { revokePreviewLinks } from './records.ts';

/**
 * Moves the live pointer to a retained release that was live before and is still compatible
 * with what is provisioned. Data, secrets, files, jobs and events are untouched.
 */
export async function rollback(deps: Deps, appId: string, releaseId: string, who: Who) {
  const result = await deps.db.transaction().execute(async (trx) => {
    const { app, target } = await switchTarget(trx, appId, releaseId);
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
    const evaluation = await fitsNow(trx, app, manifest, 'That release');
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

/** Ends every preview link of the app made until now, on every node (the change feed drops caches). */
export async function revokePreviews(
  deps: Deps,
  app: { id: string; account_id: string },
  who: Who,
): Promise<Date> {
  const revokedAt = await deps.db.transaction().execute(async (trx) => {
    const at = await revokePreviewLinks(trx, app.id);
    await recordEvents(trx, [
      {
        app_id: app.id,
        account_id: app.account_id,
        type: 'app.preview_links_revoked',
        message: 'Every preview link made until now was revoked.',
        metadata: { revoked_at: at.toISOString() },
        api_key_id: who.actor.apiKeyId,
        request_id: who.requestId,
      },
    ]);
    return at;
  });
  deps.signals.appChanged(app.id);
  return revokedAt;
}
