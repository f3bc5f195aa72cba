/**
 * Erasing an unpublished app's data for good (`POST /v0/apps/<id>/erase`): its data rows with their
 * index entries and unique claims, its file records (their bytes go with the next blob retention
 * pass, once no release or other file uses them), its app users with their sessions, invitations
 * and verification links, and its secrets. Kept: the app itself, its releases (publishing again
 * brings it back, empty), its provisioned resources, its events and analytics.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import { measureApp } from '../storage/measure.ts';
import { storageQuota } from '../storage/quota.ts';
import { lockApp } from './queries.ts';
import type { AppDataErased } from './schemas.ts';
import type { Who } from './service.ts';

/** Tables holding an app's data, in an order that deletes what refers to a row before the row. */
const TABLES = [
  'app_row_index_entries',
  'app_row_uniques',
  'app_rows',
  'app_files',
  'kv_entries',
  'queue_messages',
  'r2_objects',
  'r2_uploads',
  'app_sessions',
  'app_email_verifications',
  'app_invites',
  'app_users',
  'app_secrets',
] as const;

export async function eraseAppData(
  deps: Deps,
  appId: string,
  confirm: string,
  who: Who,
): Promise<AppDataErased> {
  if (confirm !== appId)
    throw new ApiError(
      'invalid_request',
      `confirm must be the app's id (${appId}): erasing cannot be undone.`,
      { field: 'confirm' },
    );
  const result = await deps.db.transaction().execute(async (trx) => {
    // the lock data writes wait for (data/service.ts), so none lands between the count and the delete
    const app = await lockApp(trx, appId);
    if (!app.deleted_at)
      throw new ApiError(
        'conflict',
        'Only an unpublished app can be erased: unpublish it first (DELETE /v0/apps/<app_id>).',
      );
    // what the storage quota counts, measured as it measures it
    const stored = await measureApp(trx, appId);
    const sum = (m: Map<string, { count: number }>) =>
      [...m.values()].reduce((n, x) => n + x.count, 0);
    const { rows } = await sql<{ users: number; secrets: number }>`
      select
        (select count(*) from app_users where app_id = ${appId})::int as users,
        (select count(*) from app_secrets where app_id = ${appId})::int as secrets`.execute(trx);
    const counts = rows[0]!;
    for (const table of TABLES) await trx.deleteFrom(table).where('app_id', '=', appId).execute();
    const erased = {
      rows: sum(stored.collections),
      files: sum(stored.stores),
      kv_keys: sum(stored.kv),
      r2_objects: sum(stored.r2),
      app_users: counts.users,
      secrets: counts.secrets,
    };
    const now = new Date();
    await recordEvents(trx, [
      {
        app_id: appId,
        account_id: app.account_id,
        type: 'app.data_erased',
        severity: 'warn',
        message: `Erased ${erased.rows} rows, ${erased.files} files, ${erased.kv_keys} KV keys, ${erased.r2_objects} R2 objects, ${erased.app_users} app users and ${erased.secrets} secrets.`,
        metadata: erased,
        api_key_id: who.actor.apiKeyId,
        request_id: who.requestId,
      },
    ]);
    return {
      accountId: app.account_id,
      answer: {
        app_id: appId,
        erased_at: now.toISOString(),
        erased,
        freed_bytes: stored.bytes,
      },
    };
  });
  storageQuota(deps).added(result.accountId, -result.answer.freed_bytes);
  // nodes drop what they cached of the app's secrets and app-user sessions
  deps.signals.secretsChanged(appId);
  deps.signals.appChanged(appId);
  return result.answer;
}
