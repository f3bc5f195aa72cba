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
import { appAccess } from './access.ts';
import { toAppSummary } from './mappers.ts';
import { listApps } from './queries.ts';
import { findRelease } from '../releases/records.ts';
import {
  AppDataErased,
  AppList,
  AppSummary,
  EraseAppRequest,
  PublishAppResponse,
  ResourceList,
  UnpublishResponse,
} from './schemas.ts';
import { manifestOf } from '../manifest/stored.ts';
import { measureApp, STORAGE_METRIC, withUsage } from '../storage/measure.ts';
import type { ModuleCheck } from './module-check.ts';
import { eraseAppData } from './erase.ts';
import { publish, unpublish } from './service.ts';
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
/**
 * Additions to the contract's publish: `?preview=true` stores the release beside the live one and
 * serves it at its own origin; `?require_handlers=true` keeps a release from going live when its
 * module has no handler for what its manifest declares (the CLI asks for it).
 */
const Flag = v.optional(v.picklist(['true', 'false']));
export const PublishQuery = v.strictObject({ preview: Flag, require_handlers: Flag });
/** `?require_handlers=` only, for the first publish (a preview needs a live app beside it). */
export const CreateQuery = v.strictObject({ require_handlers: Flag });
export const tags = ['Apps'];
/** What a bundle can be refused for, besides the body checks every JSON route has. */
export const BUNDLE_ERRORS: ErrorCode[] = [
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
const remove = operation({
  operationId: 'unpublishApp',
  summary: 'Unpublish (tombstone) an app; data is kept',
  description:
    'Idempotent: unpublishing a tombstoned app answers its original `deleted_at`. Publishing again brings the app back.',
  tags,
  responses: { 200: UnpublishResponse },
});
const erase = operation({
  operationId: 'eraseAppData',
  summary: "Erase an unpublished app's data for good",
  description:
    "An addition. Deletes the app's data rows, file records, app users (with their sessions, invitations and verification links) and secrets; their storage stops counting at once, and file bytes no release or other file uses are deleted by the next blob retention pass. The app, its releases, resources, events and analytics are kept: publishing again brings it back with no data. Only for an unpublished app (409 `conflict` otherwise); `confirm` must be the app's id (400 `invalid_request` otherwise). Owners and admins, as for unpublishing; the event log records it (`app.data_erased`). Cannot be undone.",
  tags,
  responses: { 200: AppDataErased },
  errors: ['conflict', 'invalid_request'],
});
const resources = operation({
  operationId: 'listResources',
  summary: 'Resources declared by the live release',
  tags,
  responses: { 200: ResourceList },
});

/** `/v0/apps` and the app-scoped routes about the app itself (its releases: `releases/routes.ts`). */
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

  r.delete('/:app_id', remove, appAccess('apps.unpublish'), async (c) =>
    remove.reply(
      c,
      200,
      await unpublish(c.var.deps, c.var.app.id, { actor: c.var.actor, requestId: c.var.requestId }),
    ),
  );

  r.post(
    '/:app_id/erase',
    erase,
    appAccess('apps.unpublish'),
    jsonBody(EraseAppRequest),
    async (c) =>
      erase.reply(
        c,
        200,
        await eraseAppData(c.var.deps, c.var.app.id, bodyOf(c, EraseAppRequest).confirm, {
          actor: c.var.actor,
          requestId: c.var.requestId,
        }),
      ),
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
