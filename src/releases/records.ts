/** The releases table as publishing, rollback and the release routes use it (the origin reads `queries.ts`). */
import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Database } from '../db/schema.ts';

export async function findRelease(db: Executor, appId: string, releaseId: string) {
  return db
    .selectFrom('releases')
    .selectAll()
    .where('app_id', '=', appId)
    .where('id', '=', releaseId)
    .executeTakeFirst();
}
export type ReleaseRow = NonNullable<Awaited<ReturnType<typeof findRelease>>>;

/** An app's releases, newest first, with the e-mail of the person whose key published each. */
export async function listReleases(db: Executor, appId: string) {
  return db
    .selectFrom('releases')
    .leftJoin('api_keys', 'api_keys.id', 'releases.created_by_api_key_id')
    .leftJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('releases')
    .select('users.email as created_by_email')
    .where('releases.app_id', '=', appId)
    .orderBy('releases.seq', 'desc')
    .execute();
}

/** The app's newest release (highest seq), live or not. */
export async function latestRelease(db: Executor, appId: string) {
  return db
    .selectFrom('releases')
    .selectAll()
    .where('app_id', '=', appId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Takes a release out of service if it is the live one (it stays, inactive). */
export async function markReleaseInactive(db: Executor, releaseId: string) {
  await db
    .updateTable('releases')
    .set({ activation_status: 'inactive' })
    .where('id', '=', releaseId)
    .where('activation_status', '=', 'live')
    .execute();
}

/** Marks a release live (its first activation time is kept). */
export async function markReleaseLive(db: Executor, releaseId: string) {
  await db
    .updateTable('releases')
    .set({
      activation_status: 'live',
      activated_at: sql`coalesce(activated_at, now())` as never,
      activation_reasons: '[]',
      missing_secrets: '[]',
    })
    .where('id', '=', releaseId)
    .execute();
}

export async function releaseManifest(db: Executor, releaseId: string) {
  return (
    await db
      .selectFrom('releases')
      .select('manifest')
      .where('id', '=', releaseId)
      .executeTakeFirst()
  )?.manifest;
}

/** The next release number of an app (call with the app locked). */
export async function nextReleaseSeq(db: Executor, appId: string): Promise<number> {
  const { max } = await db
    .selectFrom('releases')
    .select((eb) => eb.fn.max('seq').as('max'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return (max ?? 0) + 1;
}

export async function insertRelease(db: Executor, values: Insertable<Database['releases']>) {
  await db.insertInto('releases').values(values).execute();
}

/** A release's file list (bytes are in the blob store), in batches Postgres takes in one statement. */
export async function insertReleaseFiles(
  db: Executor,
  releaseId: string,
  files: { path: string; content_type: string; sha256: Buffer; bytes: { length: number } }[],
) {
  for (let i = 0; i < files.length; i += 500) {
    await db
      .insertInto('release_files')
      .values(
        files.slice(i, i + 500).map((f) => ({
          release_id: releaseId,
          path: f.path,
          content_type: f.content_type,
          sha256: f.sha256,
          size: f.bytes.length,
        })),
      )
      .execute();
  }
}

export async function releaseFileCount(db: Executor, releaseId: string): Promise<number> {
  const row = await db
    .selectFrom('release_files')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('release_id', '=', releaseId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function endPreview(db: Executor, releaseId: string): Promise<void> {
  await db.updateTable('releases').set({ preview: false }).where('id', '=', releaseId).execute();
}

/** Ends every preview link of the app issued up to now; returns the cut-off. */
export async function revokePreviewLinks(db: Executor, appId: string): Promise<Date> {
  const row = await db
    .updateTable('apps')
    .set({ previews_revoked_at: sql<Date>`now()` })
    .where('id', '=', appId)
    .returning('previews_revoked_at')
    .executeTakeFirstOrThrow();
  return row.previews_revoked_at!;
}
