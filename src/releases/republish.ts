/**
 * Publishing a stored release again, as the contract's `pending_secrets` transition says ("secrets
 * set, then republish: a new release evaluated again"): a new release from the same stored files
 * and manifest, through the same publish (limits, the module check, activation), so the developer
 * does not have to send the bundle a second time once the secrets are set.
 */
import { bindingsOfFiles } from '../bindings/declared.ts';
import type { AppRow } from '../apps/queries.ts';
import { findRelease } from './records.ts';
import type { ModuleCheck } from '../apps/module-check.ts';
import { publish, type Who } from '../apps/service.ts';
import { blobStore } from '../blobs/store.ts';
import type { Deps } from '../deps.ts';
import { ApiError, errors } from '../errors.ts';
import { manifestOf } from '../manifest/stored.ts';
import { releaseFiles } from './queries.ts';

export async function republishRelease(
  deps: Deps,
  app: AppRow,
  releaseId: string,
  who: Who,
  options: { checkModule?: ModuleCheck; confirmOlder?: boolean } = {},
) {
  const release = await findRelease(deps.db, app.id, releaseId);
  if (!release) throw errors.notFound('Release');
  if (release.activation_status !== 'pending_secrets')
    throw new ApiError(
      'invalid_request',
      `Only a release waiting for secrets is published again this way (${releaseId} is ${release.activation_status}); publish a new bundle, or roll back to a release that was live.`,
    );
  // older code never goes live without the confirmation a rollback asks for
  const live = app.live_release_id
    ? await findRelease(deps.db, app.id, app.live_release_id)
    : undefined;
  if (live && !release.preview && live.created_at > release.created_at && !options.confirmOlder)
    throw new ApiError(
      'conflict',
      `${releaseId} is older than the live release ${live.id}: publishing it again would put older code live. Confirm with {"confirm_older": true}, or publish a new bundle.`,
      { release_id: releaseId, live_release_id: live.id },
    );
  const store = blobStore(deps.config);
  const files = await Promise.all(
    (await releaseFiles(deps.db, releaseId)).map(async (f) => {
      const bytes = await store.get(deps.db, app.account_id, f.sha256);
      if (!bytes) throw new Error(`blob of ${f.path} in ${releaseId} is missing`);
      return { path: f.path, content_type: f.content_type, bytes, sha256: f.sha256 };
    }),
  );
  return publish(
    deps,
    { accountId: app.account_id, appId: app.id },
    {
      manifest: manifestOf(release.manifest),
      bindings: bindingsOfFiles(files),
      files,
      message: release.message,
      provenance: { republished_from: releaseId },
    },
    who,
    { checkModule: options.checkModule, preview: release.preview },
  );
}
