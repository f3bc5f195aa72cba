/**
 * The app-scoped routes about its releases once published: the list, rollback, making a preview
 * live, a preview's link, publishing a release waiting for secrets again. Publishing itself is
 * `apps/routes.ts` (it may create the app).
 */
import { Hono } from 'hono';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { toReleaseSummary } from '../apps/mappers.ts';
import { findRelease, listReleases } from './records.ts';
import { BUNDLE_ERRORS, tags } from '../apps/routes.ts';
import {
  PreviewLink,
  PreviewLinksRevoked,
  PublishAppResponse,
  ReleaseList,
  RollbackResponse,
} from '../apps/schemas.ts';
import type { ModuleCheck } from '../apps/module-check.ts';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { component } from '../openapi/components.ts';
import { makePreviewLive } from './make-live.ts';
import { previewLink } from './previews.ts';
import { republishRelease } from './republish.ts';
import { revokePreviews, rollback } from './service.ts';

export const RollbackRequest = component(
  'RollbackRequest',
  v.strictObject({
    release_id: v.pipe(
      v.string(),
      v.regex(/^rel_[0-9a-z]{1,64}$/, 'must be a release id (rel_...)'),
    ),
  }),
);
export const RepublishRequest = component(
  'RepublishRequest',
  v.strictObject({
    /** publish a release older than the live one again (older code goes live) */
    confirm_older: v.optional(v.boolean()),
  }),
);
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
const revokeLinks = operation({
  operationId: 'revokePreviewLinks',
  summary: 'End every preview link of the app made until now',
  description:
    'For a link that reached the wrong people: every preview link and preview cookie of the app issued until now stops opening its previews, on every node at once; links made afterwards open them again. Members who may publish can do it; the event log records it (`app.preview_links_revoked`).',
  tags,
  responses: { 200: PreviewLinksRevoked },
});
const publishAgain = operation({
  operationId: 'republishRelease',
  summary: 'Publish a release waiting for secrets again, now that they are set',
  description:
    'A new release from the stored release\'s files and manifest, evaluated again as a publish is (the contract\'s `pending_secrets` transition): no bundle is sent. Only for a `pending_secrets` release (else 400 `invalid_request`). A release older than the live one is older code: 409 `conflict` (with `live_release_id`) unless the body says `{"confirm_older": true}`, the confirmation a rollback asks for.',
  tags,
  responses: { 200: PublishAppResponse },
  errors: [...BUNDLE_ERRORS, 'invalid_request', 'conflict'],
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

export function releaseRoutes(options: { checkModule?: ModuleCheck } = {}): Hono<Env> {
  const r = new Hono<Env>();

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
      return openPreview.reply(c, 200, previewLink(c.var.deps, app, release.id));
    },
  );

  r.post('/:app_id/preview-links/revoke', revokeLinks, appAccess('apps.publish'), async (c) => {
    const { app, deps, actor, requestId } = c.var;
    const revokedAt = await revokePreviews(deps, app, { actor, requestId });
    return revokeLinks.reply(c, 200, { app_id: app.id, revoked_at: revokedAt.toISOString() });
  });

  r.post(
    '/:app_id/releases/:release_id/republish',
    publishAgain,
    appAccess('apps.publish'),
    jsonBody(RepublishRequest, { optional: true }),
    async (c) =>
      publishAgain.reply(
        c,
        200,
        await republishRelease(
          c.var.deps,
          c.var.app,
          c.req.param('release_id'),
          { actor: c.var.actor, requestId: c.var.requestId },
          { ...options, confirmOlder: bodyOf(c, RepublishRequest).confirm_older === true },
        ),
      ),
  );

  return r;
}
