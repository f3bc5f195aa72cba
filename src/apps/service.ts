/**
 * Publishing and unpublishing. What refuses a publish is checked before the module is loaded
 * (publish-checks.ts), then again in one transaction per publish: blobs, the release, its files,
 * the activation decision, provisioning and events all commit together or not at all, so a failed
 * publish leaves no trace. The app row is locked for the decision, so concurrent publishes to one
 * app serialise instead of racing on the live pointer.
 */
import { wakeQueues } from '../bindings/queues.ts';
import { type ModuleCheck, missingHandlers } from './module-check.ts';
import { firstOwnFrame } from '../source-maps/map-stack.ts';
import { mapBundleStack } from '../source-maps/release-maps.ts';
import { blobStore } from '../blobs/store.ts';
import { prepareVariants, saveVariants, type PreparedVariants } from '../blobs/variants.ts';
import type { Tx } from '../db/database.ts';
import type { ActivationStatus } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { recordEvents, type NewEvent } from '../events/record.ts';
import type { Actor } from '../http/env.ts';
import { newAppId, newId } from '../lib/ids.ts';
import {
  flattenResources,
  incompatibilities,
  mergeProvisioned,
  resourceKey,
  sameSpec,
  type ResourceState,
} from '../manifest/resources.ts';
import type { Manifest } from '../manifest/schema.ts';
import type { ValidBundle } from '../manifest/validate.ts';
import { isServerSource, manifestOf } from '../manifest/stored.ts';
import { appOrigin, toStates } from './mappers.ts';
import { rebuildFromRows, uniqueConflicts } from '../data/rebuild.ts';
import { previewLink } from '../releases/previews.ts';
import { removeAppRoutes } from '../domains/queries.ts';
import { checkPublishable } from './publish-checks.ts';
import type { ActivationResult, PublishAppResponse, UnpublishResponse } from './schemas.ts';
import { BYTECODE_MIN_SOURCE_BYTES, storeBytecode } from '../releases/bytecode.ts';
import { applyD1Migrations } from '../sql/d1-migrations.ts';
import {
  insertApp,
  lockApp,
  pointAppAt,
  provisionedResources,
  saveProvisioned,
  secretNames,
  tombstoneApp,
  type AppRow,
} from './queries.ts';
import {
  insertRelease,
  insertReleaseFiles,
  markReleaseInactive,
  markReleaseLive,
  nextReleaseSeq,
  releaseManifest,
} from '../releases/records.ts';

export type Who = { actor: Actor; requestId: string };

function requiredSecrets(resources: ResourceState[]): string[] {
  return (
    (resources.find((r) => r.resource_type === 'secrets')?.spec.required as string[] | undefined) ??
    []
  );
}

/** What the release `releaseId` declares (none when the app has no live release). */
async function liveResources(trx: Tx, releaseId: string | null): Promise<ResourceState[]> {
  const manifest = releaseId ? await releaseManifest(trx, releaseId) : undefined;
  return manifest ? flattenResources(manifestOf(manifest)) : [];
}

/** Why `manifest` cannot go live now: incompatible resources first, then missing secrets. */
export async function evaluateActivation(
  trx: Tx,
  app: Pick<AppRow, 'id' | 'live_release_id'>,
  manifest: Manifest,
): Promise<{
  status: ActivationStatus;
  reasons: string[];
  missing: string[];
  next: ResourceState[];
  provisioned: ResourceState[];
  /** what the live release declares (goLive builds what `next` adds to it) */
  live: ResourceState[];
}> {
  const next = flattenResources(manifest);
  const provisioned = toStates(await provisionedResources(trx, app.id));
  const live = await liveResources(trx, app.live_release_id);
  const reasons = incompatibilities(provisioned, next);
  if (!reasons.length) reasons.push(...(await uniqueConflicts(trx, app.id, live, next)));
  const have = new Set(await secretNames(trx, app.id));
  const missing = requiredSecrets(next).filter((n) => !have.has(n));
  const states = { next, provisioned, live };
  if (reasons.length) return { status: 'requires_migration', reasons, missing, ...states };
  if (missing.length)
    return {
      status: 'pending_secrets',
      reasons: [`missing required secrets: ${missing.join(', ')}`],
      missing,
      ...states,
    };
  return { status: 'live', reasons: [], missing: [], ...states };
}

/**
 * Makes `releaseId` the live release of a locked app: marks the one it replaces inactive,
 * records what is provisioned, and returns the events that describe it.
 */
export async function goLive(
  trx: Tx,
  app: AppRow,
  release: { id: string; manifest: Manifest },
  evaluation: { next: ResourceState[]; provisioned: ResourceState[]; live: ResourceState[] },
  who: Who,
): Promise<NewEvent[]> {
  const previous = app.live_release_id;
  if (previous) await markReleaseInactive(trx, previous);
  await markReleaseLive(trx, release.id);
  await pointAppAt(trx, app.id, release.id, release.manifest.app);
  // messages that waited for a release consuming their queue are looked at again
  await wakeQueues(trx, app.id);

  const base = {
    app_id: app.id,
    account_id: app.account_id,
    release_id: release.id,
    api_key_id: who.actor.apiKeyId,
    request_id: who.requestId,
  };
  const events: NewEvent[] = [];
  const before = evaluation.live;
  await rebuildFromRows(trx, app.id, before, evaluation.next);
  const have = new Map(evaluation.provisioned.map((r) => [resourceKey(r), r]));
  for (const r of evaluation.next) {
    const old = have.get(resourceKey(r));
    const merged = mergeProvisioned(old, r);
    if (old && sameSpec(old.spec, merged.spec)) continue;
    await saveProvisioned(trx, app.id, { ...r, spec: merged.spec }, release.id);
    events.push({
      ...base,
      type: 'resource.provisioned',
      message: `${old ? 'Updated' : 'Provisioned'} ${r.resource_type} resource "${r.resource_name}".`,
      metadata: {
        resource_type: r.resource_type,
        resource_name: r.resource_name,
        change: old ? 'updated' : 'created',
      },
    });
  }
  if (previous) {
    const nextKeys = new Set(evaluation.next.map(resourceKey));
    for (const r of before) {
      if (nextKeys.has(resourceKey(r))) continue;
      events.push({
        ...base,
        severity: 'warn',
        type: 'resource.omitted',
        message: `${r.resource_type} resource "${r.resource_name}" is not in this release; its data is kept.`,
        metadata: { resource_type: r.resource_type, resource_name: r.resource_name },
      });
    }
  }
  return events;
}

/** ` (at src/server.ts:3:9)`: where the user's own code threw, when the stack says. */
function atFrame(stack: string | undefined): string {
  const frame = stack ? firstOwnFrame(stack) : undefined;
  return frame ? ` (at ${frame})` : '';
}

/** Creates a release (and the app on first publish) and decides whether it goes live. */

export async function publish(
  deps: Deps,
  target: { accountId: string; appId?: string },
  bundle: ValidBundle,
  who: Who,
  options: { checkModule?: ModuleCheck; preview?: boolean; requireHandlers?: boolean } = {},
): Promise<PublishAppResponse> {
  // Refused before the module is loaded; the transaction checks again under the locks.
  const preview = options.preview === true;
  const { account } = await checkPublishable(deps.db, deps.config, target, bundle, {
    preview,
    lock: false,
  });
  // A server module that does not load (syntax error, bad import, top-level throw) never goes live.
  let moduleError: ModuleError | undefined;
  const entry = bundle.manifest.runtime.server_entry;
  // the ids are chosen now, so the instance that checks the module can stay as the release's first warm one
  const ids = { appId: target.appId ?? newAppId(), releaseId: newId('rel') };
  let kept = false;
  let handlers: string[] = []; // what the module offers (none without one)
  let bytecode: { engine: string; pack: Uint8Array } | undefined;
  if (entry && options.checkModule) {
    const sources = Object.fromEntries(
      bundle.files
        .filter((f) => isServerSource(f.path, f.content_type))
        .map((f) => [f.path, f.bytes.toString('utf8')]),
    );
    const sourceBytes = bundle.files
      .filter((f) => isServerSource(f.path, f.content_type))
      .reduce((n, f) => n + f.bytes.length, 0);
    const check = await options.checkModule({
      appId: ids.appId,
      planKey: account.plan_key,
      entry,
      sources,
      compile: sourceBytes >= BYTECODE_MIN_SOURCE_BYTES,
      ...(preview
        ? {}
        : {
            keepAs: {
              releaseId: ids.releaseId,
              manifest: bundle.manifest,
              bindings: bundle.bindings,
            },
          }),
    });
    // a bundle's stack names the user's files through the source map published with it
    if (!check.ok)
      moduleError = { message: check.error, stack: mapBundleStack(bundle.files, check.stack) };
    else {
      handlers = check.handlers;
      bytecode = check.bytecode;
    }
    kept = check.ok && !preview; // dropped below when the release does not go live
  }
  // D1 migrations, before the release can go live (a preview applies none: it shares the data)
  if (!moduleError && !preview && Object.keys(bundle.bindings.d1).length) {
    const failed = await applyD1Migrations(deps, ids.appId, bundle.bindings, bundle.files);
    if (failed) moduleError = { message: failed, reasons: [failed] };
  }
  const missing =
    options.requireHandlers && !moduleError && (!entry || options.checkModule)
      ? missingHandlers(bundle.manifest, handlers)
      : [];
  if (missing.length) moduleError = { message: missing.join('; '), reasons: missing };
  // Compressed variants are made before the transaction (no lock held while compressing).
  const variants = await prepareVariants(deps.db, target.accountId, bundle.files);
  const discard = () => kept && options.checkModule?.discard?.(ids.releaseId);
  let result: PublishAppResponse;
  try {
    result = await publishTx(deps, target, bundle, who, moduleError, variants, { preview, ids });
  } catch (err) {
    discard();
    throw err;
  }
  // stored before the answer, so a cold start on any node right after finds it; a failure to
  // store it only means cold starts compile the source
  if (bytecode)
    await storeBytecode(deps.db, result.release_id, bytecode.engine, bytecode.pack).catch((err) =>
      deps.log.warn('could not store the release bytecode', {
        release_id: result.release_id,
        error: String(err),
      }),
    );
  if (result.status === 'published') deps.signals.appChanged(result.app_id);
  else discard();
  return result;
}

/** Why the module cannot go live: it did not load, or (asked for) it lacks a declared handler. */
type ModuleError = { message: string; stack?: string | undefined; reasons?: string[] };

async function publishTx(
  deps: Deps,
  target: { accountId: string; appId?: string },
  bundle: ValidBundle,
  who: Who,
  moduleError: ModuleError | undefined,
  variants: PreparedVariants,
  mode: { preview: boolean; ids: { appId: string; releaseId: string } },
): Promise<PublishAppResponse> {
  return deps.db.transaction().execute(async (trx) => {
    // the bytes before the app row's lock, which the app's data writes wait for (data/service.ts)
    const store = blobStore(deps.config);
    await store.putMany(trx, target.accountId, bundle.files);
    await saveVariants(trx, store, target.accountId, variants);
    const m = bundle.manifest.app;
    const { existing } = await checkPublishable(trx, deps.config, target, bundle, {
      preview: mode.preview,
      lock: true,
    });
    const app: AppRow =
      existing ??
      (await insertApp(trx, { id: mode.ids.appId, accountId: target.accountId, app: m }));
    const seq = await nextReleaseSeq(trx, app.id);
    const evaluated = await evaluateActivation(trx, app, bundle.manifest);
    const checked = moduleError
      ? {
          ...evaluated,
          status: 'failed' as const,
          reasons: moduleError.reasons ?? [
            `the server module failed to load: ${moduleError.message}${atFrame(moduleError.stack)}`,
          ],
          missing: evaluated.missing,
        }
      : evaluated;
    // a preview that could go live is stored beside the live release, served at its own origin
    const evaluation =
      mode.preview && checked.status === 'live'
        ? {
            ...checked,
            status: 'inactive' as const,
            reasons: ['published as a preview: make it live to serve it at the app origin'],
          }
        : checked;
    const previous = app.live_release_id;
    const releaseId = mode.ids.releaseId;
    await insertRelease(trx, {
      id: releaseId,
      app_id: app.id,
      seq,
      manifest: JSON.stringify(bundle.manifest),
      message: bundle.message,
      provenance: bundle.provenance ? JSON.stringify(bundle.provenance) : null,
      created_by_api_key_id: who.actor.apiKeyId,
      created_by_key_prefix: who.actor.keyPrefix,
      activation_status: evaluation.status === 'live' ? 'inactive' : evaluation.status,
      activation_reasons: JSON.stringify(evaluation.reasons),
      missing_secrets: JSON.stringify(evaluation.missing),
      previous_release_id: previous,
      preview: mode.preview,
    });
    await insertReleaseFiles(trx, releaseId, bundle.files);
    const base = {
      app_id: app.id,
      account_id: app.account_id,
      release_id: releaseId,
      api_key_id: who.actor.apiKeyId,
      request_id: who.requestId,
    };
    const events: NewEvent[] = [
      {
        ...base,
        type: 'release.created',
        severity:
          evaluation.status === 'live' || evaluation.status === 'inactive' ? 'info' : 'warn',
        message:
          evaluation.status === 'live'
            ? 'Release created.'
            : evaluation.status === 'inactive'
              ? 'Preview release created; the live release is unchanged.'
              : `Release created and stored (${evaluation.status}).`,
        metadata: {
          ...(mode.preview ? { preview: true } : {}),
          activation_status: evaluation.status,
          files: bundle.files.length,
          reasons: evaluation.reasons,
          missing_secrets: evaluation.missing,
        },
      },
    ];
    if (moduleError) {
      events.push({
        ...base,
        type: 'runtime.deploy_failed',
        severity: 'error',
        message: moduleError.reasons
          ? 'The server module has no handler for what the manifest declares; the release was stored, not activated.'
          : 'The server module failed to load; the release was stored, not activated.',
        metadata: {
          server_entry: bundle.manifest.runtime.server_entry,
          error: moduleError.message.slice(0, 2000),
          stack: moduleError.stack?.slice(0, 4000) ?? null,
        },
      });
    }
    if (evaluation.status === 'live') {
      events.push(
        ...(await goLive(trx, app, { id: releaseId, manifest: bundle.manifest }, evaluation, who)),
      );
      events.push({
        ...base,
        type: 'release.activated',
        message: 'Release is live.',
        metadata: { previous_release_id: previous },
      });
    }
    await recordEvents(trx, events);
    const activation: ActivationResult = {
      status: evaluation.status,
      reasons: evaluation.reasons,
      missing_secrets: evaluation.missing,
      previous_release_id: previous,
    };
    return {
      status: evaluation.status === 'live' ? 'published' : 'stored',
      app_id: app.id,
      account_id: app.account_id,
      release_id: releaseId,
      origin: appOrigin(deps.config, app.id),
      previous_release_id: previous,
      activation,
      ...(mode.preview && evaluation.status === 'inactive'
        ? { preview: previewLink(deps, app, releaseId) }
        : {}),
    };
  });
}

/** Tombstones an app: the live pointer goes, the origin stops serving, data stays. Idempotent. */
export async function unpublish(deps: Deps, appId: string, who: Who): Promise<UnpublishResponse> {
  let removedRoutes: string[] = [];
  const result = await deps.db.transaction().execute(async (trx) => {
    const app = await lockApp(trx, appId);
    if (app.deleted_at)
      return {
        app_id: app.id,
        status: 'unpublished' as const,
        deleted_at: app.deleted_at.toISOString(),
      };
    const now = new Date();
    if (app.live_release_id) {
      await markReleaseInactive(trx, app.live_release_id);
    }
    await tombstoneApp(trx, app.id, now);
    // its slugs and domains go too (they answer 410 and their names are free again)
    removedRoutes = await removeAppRoutes(trx, app.id);
    await recordEvents(trx, [
      {
        app_id: app.id,
        account_id: app.account_id,
        type: 'app.unpublished',
        severity: 'warn',
        message: 'App unpublished; its origin no longer serves.',
        metadata: { previous_live_release_id: app.live_release_id },
        release_id: app.live_release_id,
        api_key_id: who.actor.apiKeyId,
        request_id: who.requestId,
      },
    ]);
    return { app_id: app.id, status: 'unpublished' as const, deleted_at: now.toISOString() };
  });
  deps.signals.appChanged(appId);
  for (const hostname of removedRoutes) deps.signals.routeChanged(hostname);
  return result;
}
