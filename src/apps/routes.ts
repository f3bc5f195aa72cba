import { Hono } from 'hono';
import * as v from 'valibot';
import { ApiError } from '../errors.ts';
import { selectedAccount } from '../http/auth.ts';
import type { Env } from '../http/env.ts';
import { bodyOf, closed, describe, jsonBody } from '../http/validate.ts';
import { flattenResources } from '../manifest/resources.ts';
import { PublishBody } from '../manifest/schema.ts';
import { MAX_PUBLISH_BODY_BYTES, validateBundle, type ValidBundle } from '../manifest/validate.ts';
import { rollback } from '../releases/service.ts';
import { appAccess } from './access.ts';
import { toAppSummary, toReleaseSummary } from './mappers.ts';
import { findRelease, listApps, listReleases } from './queries.ts';
import { manifestOf, publish, unpublish, type ModuleCheck } from './service.ts';

const publishBody = () =>
  jsonBody(PublishBody, {
    maxBytes: MAX_PUBLISH_BODY_BYTES,
    tooLarge: () => new ApiError('bundle_too_large', 'The bundle exceeds the release limits (1000 files, 20 MiB a file, 100 MiB in total).'),
    parse: validateBundle,
  });
const RollbackBody = closed({ release_id: v.pipe(v.string(), v.regex(/^rel_[0-9a-z]{1,64}$/, 'must be a release id (rel_...)')) });
const tag = ['Apps'];

/** `/v0/apps` and the app-scoped routes that are about the app and its releases. */
export function appRoutes(options: { checkModule?: ModuleCheck } = {}): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/', describe({ summary: 'List the apps of the selected account', tags: tag }), async (c) => {
    const account = await selectedAccount(c, 'apps.read');
    const rows = await listApps(c.var.deps.db, account.id);
    return c.json({ apps: rows.map((a) => toAppSummary(c.var.deps.config, a)) });
  });

  r.put('/', describe({ summary: 'Publish a new app (first release)', tags: tag }), async (c, next) => {
    c.set('membership', await selectedAccount(c, 'apps.create')); // authorised before reading a large body
    await next();
  }, publishBody(), async (c) => {
    const account = c.var.membership;
    const bundle = c.var.body as ValidBundle;
    return c.json(await publish(c.var.deps, { accountId: account.id }, bundle, { actor: c.var.actor, requestId: c.var.requestId }, options));
  });

  r.get('/:app_id', describe({ summary: 'Read an app (a tombstoned app shows deleted_at)', tags: tag }), appAccess('apps.read'), (c) =>
    c.json(toAppSummary(c.var.deps.config, c.var.app)),
  );

  r.put('/:app_id', describe({ summary: 'Publish a new release of an app', tags: tag }), appAccess('apps.publish'), publishBody(), async (c) => {
    const app = c.var.app;
    return c.json(await publish(c.var.deps, { accountId: app.account_id, appId: app.id }, c.var.body as ValidBundle, { actor: c.var.actor, requestId: c.var.requestId }, options));
  });

  r.delete('/:app_id', describe({ summary: 'Unpublish (tombstone) an app; data is kept', tags: tag }), appAccess('apps.unpublish'), async (c) =>
    c.json(await unpublish(c.var.deps, c.var.app.id, { actor: c.var.actor, requestId: c.var.requestId })),
  );

  r.get('/:app_id/releases', describe({ summary: 'List releases, newest first', tags: tag }), appAccess('apps.read'), async (c) => {
    const app = c.var.app;
    const rows = await listReleases(c.var.deps.db, app.id);
    return c.json({ app_id: app.id, releases: rows.map((row) => toReleaseSummary(row, app.live_release_id)) });
  });

  r.post('/:app_id/rollback', describe({ summary: 'Move the live pointer to an earlier live release', tags: tag }), appAccess('apps.rollback'), jsonBody(RollbackBody), async (c) => {
    const { release_id } = bodyOf(c, RollbackBody);
    return c.json(await rollback(c.var.deps, c.var.app.id, release_id, { actor: c.var.actor, requestId: c.var.requestId }));
  });

  r.get('/:app_id/resources', describe({ summary: 'Resources declared by the live release', tags: tag }), appAccess('apps.read'), async (c) => {
    const app = c.var.app;
    const live = app.live_release_id ? await findRelease(c.var.deps.db, app.id, app.live_release_id) : undefined;
    return c.json({ app_id: app.id, resources: live ? flattenResources(manifestOf(live.manifest)) : [] });
  });

  return r;
}
