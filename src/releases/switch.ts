/**
 * Moving an app's live pointer to one of its stored releases (a rollback, a preview made live): the
 * checks both make before `goLive`, in the transaction that holds the app's row.
 */
import { type AppRow, lockApp } from '../apps/queries.ts';
import { findRelease } from './records.ts';
import { evaluateActivation } from '../apps/service.ts';
import type { Tx } from '../db/database.ts';
import { ApiError, errors } from '../errors.ts';
import type { Manifest } from '../manifest/schema.ts';

/** The locked app, published, and its release `releaseId`, which is not the live one. */
export async function switchTarget(trx: Tx, appId: string, releaseId: string) {
  const app = await lockApp(trx, appId);
  if (app.deleted_at)
    throw errors.conflict('The app is unpublished; publish a release to bring it back.');
  const target = await findRelease(trx, app.id, releaseId);
  if (!target) throw errors.notFound('Release');
  if (target.id === app.live_release_id)
    throw errors.conflict('That release is already live.', { release_id: target.id });
  return { app, target };
}

/**
 * Whether `manifest` fits what is provisioned and set now: the evaluation to go live with, or the
 * error that says what it lacks (`what` names the release in the messages).
 */
export async function fitsNow(
  trx: Tx,
  app: Pick<AppRow, 'id' | 'live_release_id'>,
  manifest: Manifest,
  what: string,
) {
  const evaluation = await evaluateActivation(trx, app, manifest);
  if (evaluation.status === 'requires_migration')
    throw new ApiError(
      'requires_migration',
      `${what} is incompatible with the resources provisioned since.`,
      { reasons: evaluation.reasons },
    );
  if (evaluation.status === 'pending_secrets')
    throw new ApiError('pending_secrets', `${what} needs secrets that are not set.`, {
      missing_secrets: evaluation.missing,
    });
  return evaluation;
}
