/** `/v0/apps/<app_id>/slugs`, `/domains` and `/routes`: an app's aliases (docs/decisions/domains.md "Routes and domains"). */
import { Hono } from 'hono';
import { appAccess } from '../apps/access.ts';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { hostnameParam } from './names.ts';
import { appRoutesOf, findRoute } from './queries.ts';
import { toRouteRecord } from './records.ts';
import {
  CreateDomainBody,
  CreateSlugBody,
  DomainList,
  PatchRouteBody,
  RouteList,
  RouteRecord,
  SlugList,
  VerifyDomainBody,
} from './schemas.ts';
import { addDomain, addSlug, removeRoute, setRouteStatus, type Who } from './service.ts';
import { pendingError, verifyDomain } from './verify.ts';

const tags = ['Routes and domains'];
const PLAN_ERRORS = [
  'entitlement_required',
  'plan_limit_exceeded',
  'billing_restricted',
  'conflict',
] as const;

const createSlug = operation({
  operationId: 'createSlug',
  summary: 'Add a slug: the app also serves at <slug>.<apps host>',
  description:
    'A slug is 3 to 63 lowercase letters, digits and hyphens (no leading or trailing hyphen), not shaped like an app id and not reserved. Needs the plan feature `app_slugs` and room under `app_slugs.max`. Taken anywhere on the platform: 409 `conflict`.',
  tags,
  responses: { 201: RouteRecord },
  errors: [...PLAN_ERRORS],
});
const listSlugs = operation({
  operationId: 'listSlugs',
  summary: "List the app's slugs",
  tags,
  responses: { 200: SlugList },
});
const deleteSlug = operation({
  operationId: 'deleteSlug',
  summary: 'Remove a slug',
  description:
    'The slug host answers 410 `route_disabled` afterwards, and the name is free to be claimed again. Answers the removed route (`status: deleted`).',
  tags,
  responses: { 200: RouteRecord },
});
const listRoutes = operation({
  operationId: 'listRoutes',
  summary: 'List every alias of the app (slugs and custom domains)',
  tags,
  responses: { 200: RouteList },
});
const patchRoute = operation({
  operationId: 'updateRoute',
  summary: 'Disable or enable an alias',
  description:
    '`{"status": "disabled"}` stops an alias serving (its host answers 404 `route_disabled`; the canonical origin keeps serving). `{"status": "active"}` enables a disabled one, including one disabled by a downgrade or for billing, when the plan has the feature, room and active billing (402 otherwise); a custom domain that was never verified returns to `pending_dns`.',
  tags,
  responses: { 200: RouteRecord },
  errors: [...PLAN_ERRORS],
});
const createDomain = operation({
  operationId: 'createDomain',
  summary: 'Add a custom domain (starts pending_dns)',
  description:
    "The hostname is normalised (lowercase, trailing dot dropped, IDNA) and checked. The answer carries the TXT challenge in `verification` and the records to create in `dns_instructions` (a CNAME to the platform target for a subdomain; for an apex, CNAME flattening or ALIAS/ANAME, and the www record). With a hosting provider configured, the provider's custom hostname is created too (409 `custom_hostname_provider_conflict`, 502 `custom_hostname_provider_failed`, and then no route).",
  tags,
  responses: { 201: RouteRecord },
  errors: [...PLAN_ERRORS, 'custom_hostname_provider_conflict', 'custom_hostname_provider_failed'],
});
const listDomains = operation({
  operationId: 'listDomains',
  summary: "List the app's custom domains",
  tags,
  responses: { 200: DomainList },
});
const getDomain = operation({
  operationId: 'getDomain',
  summary: 'Read a custom domain, with its last verification checks',
  tags,
  responses: { 200: RouteRecord },
});
const verify = operation({
  operationId: 'verifyDomain',
  summary: 'Verify a custom domain through DNS',
  description:
    'Looks up the TXT challenge, the traffic record (CNAME, or the apex\'s addresses) and CAA. Verified: 200 with `status: active`. Not yet: 409 `domain_pending_verification` whose `details.checks` say, per check, what was expected, what was found and what to fix. `{"dns_verified": true}` is reserved for platform operators (`npm run admin -- verify-domain <hostname>`): 403 here.',
  tags,
  responses: { 200: RouteRecord },
  errors: ['domain_pending_verification', 'conflict', 'custom_hostname_provider_failed'],
});
const deleteDomain = operation({
  operationId: 'deleteDomain',
  summary: 'Remove a custom domain',
  description:
    'Its host answers 410 `route_disabled` afterwards. Answers the removed route (`status: deleted`).',
  tags,
  responses: { 200: RouteRecord },
  errors: ['custom_hostname_provider_failed'],
});

const who = (c: { var: Env['Variables'] }): Who => ({
  apiKeyId: c.var.actor.apiKeyId,
  requestId: c.var.requestId,
});

export function domainRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.post(
    '/:app_id/slugs',
    createSlug,
    appAccess('routes.write'),
    jsonBody(CreateSlugBody),
    async (c) => {
      const row = await addSlug(c.var.deps, c.var.app, bodyOf(c, CreateSlugBody).slug, who(c));
      return createSlug.reply(c, 201, toRouteRecord(c.var.deps.config, row));
    },
  );
  r.get('/:app_id/slugs', listSlugs, appAccess('apps.read'), async (c) => {
    const rows = await appRoutesOf(c.var.deps.db, c.var.app.id, 'slug');
    return listSlugs.reply(c, 200, {
      app_id: c.var.app.id,
      slugs: rows.map((row) => toRouteRecord(c.var.deps.config, row)),
    });
  });
  r.delete('/:app_id/slugs/:slug', deleteSlug, appAccess('routes.write'), async (c) => {
    const slug = c.req.param('slug').toLowerCase();
    const row = await removeRoute(
      c.var.deps,
      c.var.app,
      { hostname: `${slug}.${c.var.deps.config.hosts.apps}`, type: 'slug' },
      who(c),
    );
    return deleteSlug.reply(c, 200, toRouteRecord(c.var.deps.config, row));
  });

  r.get('/:app_id/routes', listRoutes, appAccess('apps.read'), async (c) => {
    const rows = await appRoutesOf(c.var.deps.db, c.var.app.id);
    return listRoutes.reply(c, 200, {
      app_id: c.var.app.id,
      routes: rows.map((row) => toRouteRecord(c.var.deps.config, row)),
    });
  });
  r.patch(
    '/:app_id/routes/:route_id',
    patchRoute,
    appAccess('routes.write'),
    jsonBody(PatchRouteBody),
    async (c) => {
      const row = await setRouteStatus(
        c.var.deps,
        c.var.app,
        c.req.param('route_id'),
        bodyOf(c, PatchRouteBody).status,
        who(c),
      );
      return patchRoute.reply(c, 200, toRouteRecord(c.var.deps.config, row));
    },
  );

  r.post(
    '/:app_id/domains',
    createDomain,
    appAccess('routes.write'),
    jsonBody(CreateDomainBody),
    async (c) => {
      const row = await addDomain(
        c.var.deps,
        c.var.app,
        bodyOf(c, CreateDomainBody).hostname,
        who(c),
      );
      return createDomain.reply(c, 201, toRouteRecord(c.var.deps.config, row));
    },
  );
  r.get('/:app_id/domains', listDomains, appAccess('apps.read'), async (c) => {
    const rows = await appRoutesOf(c.var.deps.db, c.var.app.id, 'custom_domain');
    return listDomains.reply(c, 200, {
      app_id: c.var.app.id,
      domains: rows.map((row) => toRouteRecord(c.var.deps.config, row)),
    });
  });
  r.get('/:app_id/domains/:hostname', getDomain, appAccess('apps.read'), async (c) => {
    const row = await findRoute(c.var.deps.db, c.var.app.id, {
      hostname: hostnameParam(c.req.param('hostname')),
      type: 'custom_domain',
    });
    if (!row) throw new ApiError('not_found', 'Custom domain not found.');
    return getDomain.reply(c, 200, toRouteRecord(c.var.deps.config, row));
  });
  r.post(
    '/:app_id/domains/:hostname/verify',
    verify,
    appAccess('routes.write'),
    jsonBody(VerifyDomainBody, { optional: true }),
    async (c) => {
      if (bodyOf(c, VerifyDomainBody).dns_verified === true) {
        throw new ApiError(
          'forbidden',
          'dns_verified is reserved for platform operators: on the server, run `npm run admin -- verify-domain <hostname>`. Send {} to verify through DNS.',
          { field: 'dns_verified' },
        );
      }
      const { row, diagnosis } = await verifyDomain(
        c.var.deps,
        c.var.app,
        hostnameParam(c.req.param('hostname')),
        who(c),
      );
      if (row.status !== 'active') throw pendingError(row, diagnosis);
      return verify.reply(c, 200, toRouteRecord(c.var.deps.config, row));
    },
  );
  r.delete('/:app_id/domains/:hostname', deleteDomain, appAccess('routes.write'), async (c) => {
    const row = await removeRoute(
      c.var.deps,
      c.var.app,
      { hostname: hostnameParam(c.req.param('hostname')), type: 'custom_domain' },
      who(c),
    );
    return deleteDomain.reply(c, 200, toRouteRecord(c.var.deps.config, row));
  });

  return r;
}
