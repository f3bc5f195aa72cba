import { Hono, type Context } from 'hono';
import { RELEASE_LIMITS_TEXT } from '../manifest/limits.ts';
import { createBodyBudget, PUBLISH_BODY_BUDGET } from '../http/body-budget.ts';
import * as v from 'valibot';
import { ApiError, type ErrorCode } from '../errors.ts';
import { selectedAccount } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { flattenResources } from '../manifest/resources.ts';
import { PublishBody } from '../manifest/schema.ts';
import { MAX_PUBLISH_BODY_BYTES, validateBundle, type ValidBundle } from '../manifest/validate.ts';
import { component } from '../openapi/components.ts';
import { rollback } from '../releases/service.ts';
import { appAccess } from './access.ts';
import { toAppSummary, toReleaseSummary } from './mappers.ts';
import { findRelease, listApps, listReleases } from './queries.ts';
import {
  AppList,
  AppSummary,
  PreviewLink,
  PublishAppResponse,
  ReleaseList,
  ResourceList,
  RollbackResponse,
  UnpublishResponse,
} from './schemas.ts';
import { manifestOf } from '../manifest/stored.ts';
import { measureApp, STORAGE_METRIC, withUsage } from '../storage/measure.ts';
import { publish, unpublish, type ModuleCheck } from './service.ts';
import { republishRelease } from '../releases/republish.ts';
import { makePreviewLive } from '../releases/make-live.ts';
import { previewLink } from '../releases/previews.ts';
import { query, queryOf } from '../http/validate.ts';

/** Room for publish bodies in this process (http/body-budget.ts): two of the largest at once, one per account. */
const publishRoom = createBodyBudget(PUBLISH_BODY_BUDGET);

/** Bytes of publish bodies an account's arriving publishes hold now (what the next one must fit beside). */
export const publishRoomHeld = (accountId: string): number => publishRoom.heldBy(accountId);
const publishBody = (accountOf: (c: Context<Env>) => string) =>
  jsonBody(PublishBody, {
    maxBytes: MAX_PUBLISH_BODY_BYTES,
    tooLarge: () =>
      new ApiError(
        'bundle_too_large',
        `The bundle exceeds the release limits (${RELEASE_LIMITS_TEXT}).`,
      ),
    parse: validateBundle,
    room: (c) => ({ budget: publishRoom, owner: accountOf(c) }),
  });
export const RollbackRequest = component(
  'RollbackRequest',
  v.strictObject({
    release_id: v.pipe(
      v.string(),
      v.regex(/^rel_[0-9a-z]{1,64}$/, 'must be a release id (rel_...)'),
    ),
  }),
);
/**
 * Additions to the contract's publish: `?preview=true` stores the release beside the live one and
 * serves it at its own origin; `?require_handlers=true` keeps a release from going live when its
 * module has no handler for what its manifest declares (the CLI asks for it).
 */
export const PublishQuery = v.strictObject({
  preview: v.optional(v.picklist(['true', 'false'])),
  require_handlers: v.optional(v.picklist(['true', 'false'])),
});
/** `?require_handlers=` only, for the first publish (a preview needs a live app beside it). */
export const CreateQuery = v.strictObject({
  require_handlers: v.optional(v.picklist(['true', 'false'])),
});
const tags = ['Apps'];
/** What a bundle can be refused for, besides the body checks every JSON route has. */
const BUNDLE_ERRORS: ErrorCode[] = [
  'invalid_bundle',
  'invalid_path',
  'missing_static_root',
  'missing_server_entry',
  'invalid_resource_manifest',
  'bundle_too_large',
  // the account's plan (src/plans/enforce.ts)
  'plan_limit_exceeded',
  'entitlement_required',
  'billing_restricted',
];
const PUBLISHED =
  'The release is stored either way. `status` is `published` when it went live and `stored` when it did not; `activation` says why (`pending_secrets`, `requires_migration`, `failed`). With `?require_handlers=true` (an addition; the CLI sends it) a release whose server module has no handler for what its manifest declares (`fetch` with `fallback: server`, `job` for declared jobs, `webhook` for webhooks delivered to the server) does not go live: activation `failed`, a reason per missing handler, and a `runtime.deploy_failed` event. Without it, handlers stay optional as the contract has them.';

const list = operation({
  operationId: 'listApps',
  summary: 'List the apps of the selected account',
  tags,
  accountHeader: true,
  responses: { 200: AppList },
});
const create = operation({
  operationId: 'publishNewApp',
  summary: 'Publish a new app (its first release)',
  description: PUBLISHED,
  tags,
  accountHeader: true,
  responses: { 200: PublishAppResponse },
  errors: [...BUNDLE_ERRORS, 'account_suspended'],
});
const get = operation({
  operationId: 'getApp',
  summary: 'Read an app (a tombstoned app shows deleted_at)',
  tags,
  responses: { 200: AppSummary },
});
const republish = operation({
  operationId: 'publishRelease',
  summary: 'Publish a new release of an app',
  description: `${PUBLISHED} With \`?preview=true\` a release that could go live is stored as a preview instead (\`stored\`, activation \`inactive\`), the live pointer unchanged, and \`preview\` says where it is served and gives a link that opens it for seven days.`,
  tags,
  responses: { 200: PublishAppResponse },
  errors: [...BUNDLE_ERRORS, 'conflict'],
});
const makeLive = operation({
  operationId: 'makePreviewLive',
  summary: 'Make a preview release the live release',
  description:
    'The checks of a publish are made again now (plan limits, resources provisioned since, secrets set since); then the live pointer moves to the preview, as a publish moves it. 409 `conflict` when the release is not a preview that could go live, is live already, or the app is unpublished.',
  tags,
  responses: { 200: PublishAppResponse },
  errors: [
    'conflict',
    'requires_migration',
    'pending_secrets',
    'plan_limit_exceeded',
    'entitlement_required',
  ],
});
const openPreview = operation({
  operationId: 'createPreviewLink',
  summary: "A link that opens a preview release's origin in a browser",
  description:
    'Every member of the account may open its previews. The link carries a grant valid for seven days (a new one each call); following it sets a cookie on the preview origin only. 409 `conflict` for a release that is not a servable preview.',
  tags,
  responses: { 200: PreviewLink },
  errors: ['conflict'],
});
const publishAgain = operation({
  operationId: 'republishRelease',
  summary: 'Publish a release waiting for secrets again, now that they are set',
  description:
    "A new release from the stored release's files and manifest, evaluated again as a publish is (the contract's `pending_secrets` transition): no bundle is sent. Only for a `pending_secrets` release (else 400 `invalid_request`).",
  tags,
  responses: { 200: PublishAppResponse },
  errors: [...BUNDLE_ERRORS, 'invalid_request'],
});
const remove = operation({
  operationId: 'unpublishApp',
  summary: 'Unpublish (tombstone) an app; data is kept',
  description:
    'Idempotent: unpublishing a tombstoned app answers its original `deleted_at`. Publishing again brings the app back.',
  tags,
  responses: { 200: UnpublishResponse },
});
const releases = operation({
  operationId: 'listReleases',
  summary: 'List releases, newest first',
  tags,
  responses: { 200: ReleaseList },
});
const back = operation({
  operationId: 'rollbackApp',
  summary: 'Move the live pointer to an earlier live release',
  description:
    'The target must have been live before and still fit what is provisioned. 409 `conflict` when the app is unpublished, the release is already live or was never live; `requires_migration` or `pending_secrets` when it no longer fits.',
  tags,
  responses: { 200: RollbackResponse },
  errors: ['conflict', 'requires_migration', 'pending_secrets'],
});
const resources = operation({
  operationId: 'listResources',
  summary: 'Resources declared by the live release',
  tags,
  responses: { 200: ResourceList },
});

/** `/v0/apps` and the app-scoped routes that are about the app and its releases. */
export function appRoutes(options: { checkModule?: ModuleCheck } = {}): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/', list, async (c) => {
    const account = await selectedAccount(c, 'apps.read');
    const rows = await listApps(c.var.deps.db, account.id);
    return list.reply(c, 200, { apps: rows.map((a) => toAppSummary(c.var.deps.config, a)) });
  });

  r.put(
    '/',
    create,
    async (c, next) => {
      c.set('membership', await selectedAccount(c, 'apps.create')); // authorised before reading a large body
      await next();
    },
    query(CreateQuery),
    publishBody((c) => c.var.membership.id),
    async (c) => {
      const account = c.var.membership;
      const bundle = c.var.body as ValidBundle;
      const requireHandlers = queryOf(c, CreateQuery).require_handlers === 'true';
      return create.reply(
        c,
        200,
        await publish(
          c.var.deps,
          { accountId: account.id },
          bundle,
          { actor: c.var.actor, requestId: c.var.requestId },
          { ...options, requireHandlers },
        ),
      );
    },
  );

  r.get('/:app_id', get, appAccess('apps.read'), (c) =>
    get.reply(c, 200, toAppSummary(c.var.deps.config, c.var.app)),
  );

  r.put(
    '/:app_id',
    republish,
    appAccess('apps.publish'),
    query(PublishQuery),
    publishBody((c) => c.var.app.account_id),
    async (c) => {
      const app = c.var.app;
      const bundle = c.var.body as ValidBundle;
      const q = queryOf(c, PublishQuery);
      const [preview, requireHandlers] = [q.preview === 'true', q.require_handlers === 'true'];
      return republish.reply(
        c,
        200,
        await publish(
          c.var.deps,
          { accountId: app.account_id, appId: app.id },
          bundle,
          { actor: c.var.actor, requestId: c.var.requestId },
          { ...options, preview, requireHandlers },
        ),
      );
    },
  );

  r.post(
    '/:app_id/releases/:release_id/make-live',
    makeLive,
    appAccess('apps.publish'),
    async (c) =>
      makeLive.reply(
        c,
        200,
        await makePreviewLive(c.var.deps, c.var.app.id, c.req.param('release_id'), {
          actor: c.var.actor,
          requestId: c.var.requestId,
        }),
      ),
  );

  r.post(
    '/:app_id/releases/:release_id/preview-link',
    openPreview,
    appAccess('apps.read'),
    async (c) => {
      const app = c.var.app;
      const release = await findRelease(c.var.deps.db, app.id, c.req.param('release_id'));
      if (!release) throw new ApiError('not_found', 'Release not found.');
      if (
        !release.preview ||
        !['inactive', 'live'].includes(release.activation_status) ||
        app.deleted_at
      )
        throw new ApiError(
          'conflict',
          'Only a preview that could go live is served at a preview origin.',
          { release_id: release.id, activation_status: release.activation_status },
        );
      return openPreview.reply(c, 200, previewLink(c.var.deps, app.id, release.id));
    },
  );

  r.post(
    '/:app_id/releases/:release_id/republish',
    publishAgain,
    appAccess('apps.publish'),
    async (c) =>
      publishAgain.reply(
        c,
        200,
        await republishRelease(
          c.var.deps,
          c.var.app,
          c.req.param('release_id'),
          { actor: c.var.actor, requestId: c.var.requestId },
          options,
        ),
      ),
  );

  r.delete('/:app_id', remove, appAccess('apps.unpublish'), async (c) =>
    remove.reply(
      c,
      200,
      await unpublish(c.var.deps, c.var.app.id, { actor: c.var.actor, requestId: c.var.requestId }),
    ),
  );

  r.get('/:app_id/releases', releases, appAccess('apps.read'), async (c) => {
    const app = c.var.app;
    const rows = await listReleases(c.var.deps.db, app.id);
    return releases.reply(c, 200, {
      app_id: app.id,
      releases: rows.map((row) => toReleaseSummary(c.var.deps.config, row, app.live_release_id)),
    });
  });

  r.post(
    '/:app_id/rollback',
    back,
    appAccess('apps.rollback'),
    jsonBody(RollbackRequest),
    async (c) => {
      const { release_id } = bodyOf(c, RollbackRequest);
      return back.reply(
        c,
        200,
        await rollback(c.var.deps, c.var.app.id, release_id, {
          actor: c.var.actor,
          requestId: c.var.requestId,
        }),
      );
    },
  );

  r.get('/:app_id/resources', resources, appAccess('apps.read'), async (c) => {
    const app = c.var.app;
    const [live, stored] = await Promise.all([
      app.live_release_id ? findRelease(c.var.deps.db, app.id, app.live_release_id) : undefined,
      measureApp(c.var.deps.db, app.id),
    ]);
    return resources.reply(c, 200, {
      app_id: app.id,
      resources: withUsage(live ? flattenResources(manifestOf(live.manifest)) : [], stored),
      usage: { [STORAGE_METRIC]: stored.bytes },
    });
  });

  return r;
}
