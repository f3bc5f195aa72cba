/**
 * Platform retention, idempotent and batched (cron):
 * - `events_retention`: events older than the account plan's `events.retention_days` (built in:
 *   Free 1 day, Starter 7, Business 30, Business Plus / Agency / internal 90), webhook delivery ids after 48 hours
 *   (de-duplication needs 24), schedule claims after 3 days, sign-in and app-user material past its use,
 *   deleted data rows and file records after DELETED_KEEP_DAYS, permanently failed jobs after a day, and
 *   a recount of each app's waiting jobs (src/jobs/backlog.ts);
 * - `releases_retention`: see pruneReleases.
 */
import type { Task } from 'graphile-worker';
import { sql } from 'kysely';
import type { Deps } from '../../src/deps.ts';
import { recordEvents } from '../../src/events/record.ts';
import { PLAN_KEYS } from '../../src/plans/catalogue.ts';
import { pruneBlobs } from '../../src/blobs/retention.ts';
import { recountWaiting } from '../../src/jobs/backlog.ts';

const BATCH = 5000;
/** Releases kept per app besides the live one: the newest KEEP_NEWEST, and any created in the last KEEP_DAYS. */
export const RELEASES_KEEP_NEWEST = 20;
export const RELEASES_KEEP_DAYS = 30;

async function batched(run: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await run();
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * App-user material past its use: sessions expired or revoked (kept 7 days after, for audit), invites
 * and e-mail verification links expired or used over 30 days ago. Signed file URLs carry their own
 * expiry (stateless HMAC), so there is nothing stored to expire.
 */
export async function pruneAuthMaterial(
  deps: Deps,
  now = new Date(),
): Promise<{ sessions: number; invites: number; verifications: number }> {
  const sessions = await batched(async () => {
    const r =
      await sql`delete from app_sessions where token_hash in (select token_hash from app_sessions
        where coalesce(revoked_at, expires_at) < ${now}::timestamptz - interval '7 days' limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
  const invites = await batched(async () => {
    const r = await sql`delete from app_invites where id in (select id from app_invites
        where coalesce(accepted_at, expires_at) < ${now}::timestamptz - interval '30 days' limit ${BATCH})`.execute(
      deps.db,
    );
    return Number(r.numAffectedRows ?? 0);
  });
  const verifications = await batched(async () => {
    const r =
      await sql`delete from app_email_verifications where token_hash in (select token_hash from app_email_verifications
        where coalesce(used_at, expires_at) < ${now}::timestamptz - interval '30 days' limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
  return { sessions, invites, verifications };
}

/** Days a deleted data row or file record is kept before it is purged (for the operator to recover a mistake). */
export const DELETED_KEEP_DAYS = 7;

/**
 * Data rows and file records deleted more than DELETED_KEEP_DAYS ago: deleting is soft (the row
 * disappears from every read at once, and stops counting against the storage quota), and without
 * this the table would keep every row ever deleted. A file's bytes go with blob retention once no
 * release, variant or live file uses them.
 */
export async function pruneDeletedData(
  deps: Deps,
  now = new Date(),
): Promise<{ rows: number; files: number }> {
  const prune = (table: 'app_rows' | 'app_files') =>
    batched(async () => {
      const r =
        await sql`delete from ${sql.table(table)} where ctid in (select ctid from ${sql.table(table)}
          where deleted_at < ${now}::timestamptz - ${DELETED_KEEP_DAYS} * interval '1 day' limit ${BATCH})`.execute(
          deps.db,
        );
      return Number(r.numAffectedRows ?? 0);
    });
  return { rows: await prune('app_rows'), files: await prune('app_files') };
}

/** Hours a permanently failed job is kept in the queue's table (its `job.failed` event says why it failed). */
export const FAILED_JOB_KEEP_HOURS = 24;

/**
 * Jobs that failed for good: graphile-worker keeps such a job's row (with its payload, up to 64 KiB
 * for an app job) forever, so an app whose job always throws would leave one behind per enqueue.
 * The same query as graphile-worker's own `DELETE_PERMAFAILED_JOBS` cleanup, after a day.
 */
export async function pruneFailedJobs(deps: Deps, now = new Date()): Promise<number> {
  return batched(async () => {
    const r =
      await sql`delete from graphile_worker._private_jobs where id in (select id from graphile_worker._private_jobs
        where attempts >= max_attempts and locked_at is null and updated_at < ${now}::timestamptz - ${FAILED_JOB_KEEP_HOURS} * interval '1 hour' limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
}

/**
 * Platform sign-in material past its use, kept 7 days after it ended for audit: e-mail links,
 * pending sign-ups, console sessions, device authorizations, invitations; and abuse counters
 * whose windows have passed.
 */
export async function prunePlatformAuth(
  deps: Deps,
  now = new Date(),
): Promise<{ links: number; sessions: number; devices: number; counters: number }> {
  const prune = (table: string, key: string, ended: string) =>
    batched(async () => {
      const r =
        await sql`delete from ${sql.table(table)} where ${sql.ref(key)} in (select ${sql.ref(key)} from ${sql.table(table)}
          where ${sql.raw(ended)} < ${now}::timestamptz - interval '7 days' limit ${BATCH})`.execute(
          deps.db,
        );
      return Number(r.numAffectedRows ?? 0);
    });
  const links =
    (await prune('email_auth_tokens', 'token_hash', 'coalesce(used_at, expires_at)')) +
    (await prune('pending_signups', 'token_hash', 'coalesce(used_at, expires_at)'));
  const sessions = await prune(
    'console_sessions',
    'id',
    "least(coalesce(revoked_at, expires_at), last_seen_at + interval '7 days')",
  );
  const devices = await prune('device_authorizations', 'id', 'expires_at');
  await prune('account_invitations', 'id', 'coalesce(accepted_at, revoked_at, expires_at)');
  const counters = await batched(async () => {
    const r =
      await sql`delete from abuse_counters where ctid in (select ctid from abuse_counters where expires_at < ${now}::timestamptz limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
  return { links, sessions, devices, counters };
}

export async function pruneEvents(
  deps: Deps,
  now = new Date(),
): Promise<{ events: number; deliveries: number; scheduleRuns: number }> {
  // each plan's events.retention_days (the catalogue, with the operator's plans file); an unknown plan key keeps Free's
  const plans = deps.config.plans;
  const cases = PLAN_KEYS.map(
    (plan) => sql`when ${plan} then ${plans[plan].limits['events.retention_days']}::int`,
  );
  const events = await batched(async () => {
    const r = await sql`delete from app_events where id in (
        select e.id from app_events e join accounts a on a.id = e.account_id
        where e.created_at < ${now}::timestamptz - (case a.plan_key ${sql.join(cases, sql` `)} else ${plans.free.limits['events.retention_days']}::int end) * interval '1 day'
        limit ${BATCH})`.execute(deps.db);
    return Number(r.numAffectedRows ?? 0);
  });
  const deliveries = await batched(async () => {
    const r =
      await sql`delete from webhook_deliveries where ctid in (select ctid from webhook_deliveries where received_at < ${now}::timestamptz - interval '48 hours' limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
  const scheduleRuns = await batched(async () => {
    const r =
      await sql`delete from app_schedule_runs where ctid in (select ctid from app_schedule_runs where created_at < ${now}::timestamptz - interval '3 days' limit ${BATCH})`.execute(
        deps.db,
      );
    return Number(r.numAffectedRows ?? 0);
  });
  return { events, deliveries, scheduleRuns };
}

/**
 * Deletes releases beyond the retention policy: never the live release, never one of the newest
 * RELEASES_KEEP_NEWEST, never one created in the last RELEASES_KEEP_DAYS (the rollback window).
 * Their file rows go with them; blobs no release of the account references any more are removed.
 * An app whose pruning fails gets `release.retention_failed`; its live release is untouched.
 */
export async function pruneReleases(
  deps: Deps,
  now = new Date(),
): Promise<{ releases: number; blobs: number; failed: number }> {
  const candidates = await sql<{ id: string; app_id: string; account_id: string }>`
    select r.id, r.app_id, a.account_id from (
      select id, app_id, created_at, row_number() over (partition by app_id order by seq desc) as rank from releases) r
    join apps a on a.id = r.app_id
    where r.rank > ${RELEASES_KEEP_NEWEST}
      and r.created_at < ${now}::timestamptz - ${RELEASES_KEEP_DAYS} * interval '1 day'
      and r.id is distinct from a.live_release_id`.execute(deps.db);
  const byApp = new Map<string, { account_id: string; ids: string[] }>();
  for (const c of candidates.rows) {
    const e = byApp.get(c.app_id) ?? { account_id: c.account_id, ids: [] };
    e.ids.push(c.id);
    byApp.set(c.app_id, e);
  }
  let releases = 0;
  let failed = 0;
  const accounts = new Set<string>();
  for (const [appId, { account_id, ids }] of byApp) {
    try {
      await deps.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('release_files').where('release_id', 'in', ids).execute();
        // A release that became live since the query is skipped by this condition.
        const r = await trx
          .deleteFrom('releases')
          .where('id', 'in', ids)
          .where(
            'id',
            'not in',
            trx
              .selectFrom('apps')
              .select('live_release_id')
              .where('id', '=', appId)
              .where('live_release_id', 'is not', null),
          )
          .executeTakeFirst();
        releases += Number(r.numDeletedRows);
      });
      accounts.add(account_id);
    } catch (err) {
      failed++;
      await recordEvents(deps.db, [
        {
          app_id: appId,
          account_id,
          type: 'release.retention_failed',
          severity: 'warn',
          message: 'Old releases could not be cleaned up; the live release is unaffected.',
          metadata: { releases: ids.length, error: (err as Error).message.slice(0, 500) },
        },
      ]).catch(() => {});
    }
  }
  let blobs = 0;
  for (const accountId of accounts) blobs += await pruneBlobs(deps, accountId, now);
  return { releases, blobs, failed };
}

export function eventsRetentionTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = {
      ...(await pruneEvents(deps)),
      app_auth: await pruneAuthMaterial(deps),
      platform_auth: await prunePlatformAuth(deps),
      deleted: await pruneDeletedData(deps),
      failed_jobs: await pruneFailedJobs(deps),
      waiting_recounted: await recountWaiting(deps.db),
    };
    const any = (o: object): boolean =>
      Object.values(o).some((x) => (typeof x === 'object' && x ? any(x) : Boolean(x)));
    if (any(r)) helpers.logger.info(`retention: ${JSON.stringify(r)}`);
  };
}

export function releasesRetentionTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await pruneReleases(deps);
    if (r.releases || r.failed) helpers.logger.info(`release retention: ${JSON.stringify(r)}`);
  };
}
