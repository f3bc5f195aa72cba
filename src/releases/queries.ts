/**
 * What the app origin reads to serve a release: the live pointer, the release and its files, sealed
 * secrets. Each runs as a named prepared statement (`hotRows`, src/db/prepared.ts): they are the cold path.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { hotRows } from '../db/prepared.ts';

/** What decides whether the app may serve beside its row (`apps`): its account's suspension and its own operator flags. */
const ACCOUNT_SUSPENDED = sql<boolean>`exists (select 1 from account_flags f where f.account_id = apps.account_id and f.flag = 'suspended')`;
const APP_FLAGS = sql<
  string[] | null
>`(select array_agg(f.flag) from app_flags f where f.app_id = apps.id)`;

/** The live pointer with what decides whether and how the app may serve: its account's plan and the operator's flags. */
export async function appPointer(db: Executor, appId: string) {
  const builder = db
    .selectFrom('apps')
    .innerJoin('accounts', 'accounts.id', 'apps.account_id')
    .select([
      'apps.id',
      'apps.account_id',
      'apps.live_release_id',
      'apps.deleted_at',
      'accounts.plan_key',
      ACCOUNT_SUSPENDED.as('account_suspended'),
      APP_FLAGS.as('app_flags'),
    ])
    .where('apps.id', '=', appId);
  return (await hotRows(db, builder))[0];
}

/** An app's pointer row with one of its releases in the live pointer's place, if that release is a preview. */
export async function previewPointer(db: Executor, appId: string, releaseId: string) {
  const builder = db
    .selectFrom('apps')
    .innerJoin('accounts', 'accounts.id', 'apps.account_id')
    .innerJoin('releases', 'releases.app_id', 'apps.id')
    .select([
      'apps.id',
      'apps.account_id',
      'releases.id as live_release_id',
      'apps.deleted_at',
      'apps.previews_revoked_at',
      'accounts.plan_key',
      ACCOUNT_SUSPENDED.as('account_suspended'),
      APP_FLAGS.as('app_flags'),
    ])
    .where('apps.id', '=', appId)
    .where('releases.id', '=', releaseId)
    .where('releases.preview', '=', true)
    .where('releases.activation_status', 'in', ['inactive', 'live']);
  return (await hotRows(db, builder))[0];
}

/** A release with its app's account. */
export async function releaseWithAccount(db: Executor, releaseId: string) {
  const builder = db
    .selectFrom('releases')
    .innerJoin('apps', 'apps.id', 'releases.app_id')
    .select(['releases.id', 'releases.app_id', 'releases.manifest', 'apps.account_id'])
    .where('releases.id', '=', releaseId);
  return (await hotRows(db, builder))[0];
}

export async function releaseFiles(db: Executor, releaseId: string) {
  return hotRows(
    db,
    db.selectFrom('release_files').selectAll().where('release_id', '=', releaseId),
  );
}

/** The compressed variants of a release's files (its account's, looked up in the query so it can run beside the release's). */
export async function releaseVariants(db: Executor, releaseId: string) {
  const builder = db
    .selectFrom('blob_variants as v')
    .select(['v.sha256', 'v.encoding', 'v.variant_sha256', 'v.size'])
    .where('v.account_id', '=', (eb) =>
      eb
        .selectFrom('releases')
        .innerJoin('apps', 'apps.id', 'releases.app_id')
        .select('apps.account_id')
        .where('releases.id', '=', releaseId),
    )
    .where('v.variant_sha256', 'is not', null)
    .where('v.sha256', 'in', (eb) =>
      eb.selectFrom('release_files').select('sha256').where('release_id', '=', releaseId),
    );
  return hotRows(db, builder);
}

/** The app's secrets, still sealed. */
export async function sealedSecrets(db: Executor, appId: string) {
  return hotRows(
    db,
    db.selectFrom('app_secrets').select(['name', 'sealed']).where('app_id', '=', appId),
  );
}

/** `isServerSource` (src/manifest/stored.ts) in SQL, over `release_files f`: keep the two alike. */
const SERVER_SOURCE_SQL = sql`(f.path ~ '\\.(m?js|cjs)$' or f.content_type ~ '(javascript|ecmascript)')`;

export type FirstSight = {
  id: string;
  account_id: string;
  live_release_id: string | null;
  deleted_at: unknown;
  plan_key: string;
  account_suspended: boolean;
  app_flags: string[] | null;
  /** the live release's manifest, files and compressed variants (hashes in hex); null without one */
  manifest: unknown;
  files: { path: string; content_type: string; sha256: string; size: number }[] | null;
  variants:
    | { sha256: string; encoding: 'br' | 'gzip'; variant_sha256: string; size: number }[]
    | null;
  /** sealed secrets in base64, when asked for */
  secrets: { name: string; sealed: string }[] | null;
  /** the bytes (base64) of its server sources kept in Postgres, up to `maxSourceBytes` each, when it has server code */
  sources: { sha256: string; data: string }[] | null;
};

/**
 * An app seen for the first time: the pointer, and what its first request reads next (the live
 * release, its files and variants, its secrets, its server sources' bytes), in one statement, so
 * in one round trip and one snapshot. Later reads are the separate queries above.
 */
export async function firstSight(
  db: Executor,
  appId: string,
  withSecrets: boolean,
  maxSourceBytes: number,
): Promise<FirstSight | undefined> {
  const query = sql<FirstSight>`select apps.id, apps.account_id, apps.live_release_id, apps.deleted_at, acc.plan_key,
      ${ACCOUNT_SUSPENDED} as account_suspended, ${APP_FLAGS} as app_flags,
      r.manifest,
      (select json_agg(json_build_object('path', f.path, 'content_type', f.content_type, 'sha256', encode(f.sha256, 'hex'), 'size', f.size))
         from release_files f where f.release_id = r.id) as files,
      (select json_agg(json_build_object('sha256', encode(v.sha256, 'hex'), 'encoding', v.encoding, 'variant_sha256', encode(v.variant_sha256, 'hex'), 'size', v.size))
         from blob_variants v where v.account_id = apps.account_id and v.variant_sha256 is not null
           and v.sha256 in (select f.sha256 from release_files f where f.release_id = r.id)) as variants,
      case when ${withSecrets}::boolean then (select json_agg(json_build_object('name', s.name, 'sealed', encode(s.sealed, 'base64'))) from app_secrets s where s.app_id = apps.id) end as secrets,
      case when r.manifest->'runtime'->>'server_entry' is not null then
        (select json_agg(json_build_object('sha256', encode(f.sha256, 'hex'), 'data', encode(b.data, 'base64')))
           from release_files f join blobs b on b.account_id = apps.account_id and b.sha256 = f.sha256
           where f.release_id = r.id and ${SERVER_SOURCE_SQL} and b.data is not null and b.size <= ${maxSourceBytes}::bigint) end as sources
    from apps join accounts acc on acc.id = apps.account_id left join releases r on r.id = apps.live_release_id
    where apps.id = ${appId}`;
  return (await hotRows(db, { compile: () => query.compile(db) }))[0];
}
