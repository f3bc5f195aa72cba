/**
 * Slugs and custom domains: adding (plan feature and count checked under the account row lock),
 * verifying, enabling and disabling, removing. Every write commits before the provider or this
 * node's route table hears of it; other nodes hear it from the `app_routes` trigger.
 */
import { createHmac } from 'node:crypto';
import { randomToken, newId } from '../lib/ids.ts';
import type { Deps } from '../deps.ts';
import type { Executor } from '../db/database.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import { planOf } from '../plans/catalogue.ts';
import { planLimitError, requireFeature } from '../plans/enforce.ts';
import { accountPlanRow, enabledRoutes, heldRoutes } from '../plans/queries.ts';
import { checkHostname, checkSlug } from './names.ts';
import { TAKEOVER_PREFIX, txtHolds } from './dns-check.ts';
import { providerOf, type Provider } from './provider.ts';
import { findRoute, hostnameHolder, insertRoute, updateRoute, type RouteRow } from './queries.ts';
import type { ProviderRecord } from './schemas.ts';

export type App = { id: string; account_id: string };
export type Who = { apiKeyId: string | null; requestId: string | null };

/** How long pending domains are re-checked in the background, and the gaps between checks. */
export const RECHECK_FOR_MS = 7 * 24 * 3600_000;
export const RECHECK_STEPS_MS = [60_000, 5 * 60_000, 15 * 60_000, 3600_000, 6 * 3600_000];

export function nextCheckAt(created: Date, attempts: number, now = new Date()): Date | null {
  const at = new Date(
    now.getTime() + RECHECK_STEPS_MS[Math.min(attempts, RECHECK_STEPS_MS.length - 1)]!,
  );
  return at.getTime() - created.getTime() > RECHECK_FOR_MS ? null : at;
}

const KINDS = {
  slug: {
    feature: 'app_slugs',
    limit: 'app_slugs.max',
    what: 'Slugs',
    noun: 'slugs',
    fix: 'Remove a slug you no longer use (disabled ones count: they keep their names)',
  },
  custom_domain: {
    feature: 'custom_domains',
    limit: 'custom_domains.max',
    what: 'Custom domains',
    noun: 'custom domains',
    fix: 'Remove a custom domain you no longer use (disabled and unverified ones count: they keep their names)',
  },
} as const;

/**
 * One more route of `type` on the account: the plan's feature, billing access and count (caller
 * holds the account lock). Adding counts every name the account holds, disabled or unverified ones
 * too, since each keeps its name from everyone else; enabling one it already holds counts the
 * enabled ones, what serves.
 */
async function checkRoom(
  deps: Deps,
  trx: Executor,
  accountId: string,
  type: 'slug' | 'custom_domain',
  counting: 'held' | 'enabled' = 'held',
): Promise<void> {
  const account = await accountPlanRow(trx, accountId, { lock: true });
  if (!account) throw errors.notFound('Account');
  const plans = deps.config.plans;
  const plan = planOf(plans, account.plan_key);
  const kind = KINDS[type];
  requireFeature(plans, plan, account, kind.feature, kind.what);
  const routes = await (counting === 'held' ? heldRoutes : enabledRoutes)(trx, accountId);
  const count = routes.filter((r) => r.route_type === type).length;
  const max = plan.limits[kind.limit];
  if (count + 1 > max)
    throw planLimitError(plans, plan, kind.limit, count + 1, max, kind.noun, kind.fix);
}

function taken(hostname: string, sameApp: boolean): ApiError {
  return new ApiError(
    'conflict',
    sameApp
      ? `${hostname} is already an alias of this app.`
      : `${hostname} is already in use by another app.`,
    { hostname },
  );
}

async function insertOrConflict(
  trx: Executor,
  app: App,
  row: Parameters<typeof insertRoute>[1],
): Promise<RouteRow> {
  const holder = await hostnameHolder(trx, row.hostname);
  if (holder) throw taken(row.hostname, holder.app_id === app.id);
  try {
    return await insertRoute(trx, row);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw taken(row.hostname, false);
    throw err;
  }
}

export const event = (
  app: App,
  who: Who,
  type: string,
  message: string,
  metadata: Record<string, unknown>,
) => ({
  app_id: app.id,
  account_id: app.account_id,
  type,
  message,
  metadata,
  api_key_id: who.apiKeyId,
  request_id: who.requestId,
});

export async function addSlug(deps: Deps, app: App, raw: string, who: Who): Promise<RouteRow> {
  const slug = checkSlug(raw);
  const hostname = `${slug}.${deps.config.hosts.apps}`;
  const row = await deps.db.transaction().execute(async (trx) => {
    await checkRoom(deps, trx, app.account_id, 'slug');
    const created = await insertOrConflict(trx, app, {
      id: newId('route'),
      appId: app.id,
      accountId: app.account_id,
      type: 'slug',
      hostname,
      slug,
      status: 'active',
      token: null,
      nextCheckAt: null,
      provider: null,
    });
    await recordEvents(trx, [
      event(app, who, 'route.created', `Slug ${slug} now serves this app at ${hostname}.`, {
        route_id: created.id,
        route_type: 'slug',
        hostname,
      }),
    ]);
    return created;
  });
  deps.signals.routeChanged(hostname);
  return row;
}

export async function addDomain(
  deps: Deps,
  app: App,
  raw: string,
  who: Who,
  provider: Provider | undefined = providerOf(deps.config),
): Promise<RouteRow> {
  const { hostname } = checkHostname(deps.config, raw);
  let made: ProviderRecord | null = null;
  try {
    const row = await deps.db.transaction().execute(async (trx) => {
      await checkRoom(deps, trx, app.account_id, 'custom_domain');
      const id = newId('route');
      // the provider is asked last, inside the transaction: its failure leaves no route behind
      const holder = await hostnameHolder(trx, hostname);
      if (holder) {
        if (holder.account_id === app.account_id) throw taken(hostname, holder.app_id === app.id);
        await takeOver(deps, trx, app, holder, who, provider);
      }
      if (provider) made = await provider.create(hostname);
      const now = new Date();
      const created = await insertOrConflict(trx, app, {
        id,
        appId: app.id,
        accountId: app.account_id,
        type: 'custom_domain',
        hostname,
        slug: null,
        status: 'pending_dns',
        token: `platform-verify=${id}-${randomToken(16)}`,
        nextCheckAt: nextCheckAt(now, 0, now),
        provider: made,
      });
      await recordEvents(trx, [
        event(
          app,
          who,
          'route.created',
          `Custom domain ${hostname} was added; it serves once DNS is verified.`,
          { route_id: created.id, route_type: 'custom_domain', hostname },
        ),
      ]);
      return created;
    });
    deps.signals.routeChanged(hostname);
    return row;
  } catch (err) {
    // the transaction did not commit: the provider's hostname must not outlive it
    const orphan = made as ProviderRecord | null;
    if (orphan && provider)
      await provider.remove(orphan.id).catch((e) =>
        deps.log.error('could not remove a provider hostname after a failed create', {
          hostname,
          provider_id: orphan.id,
          error: (e as Error).message,
        }),
      );
    throw err;
  }
}

/** The TXT record that proves a name held by another account is the caller's: its value is fixed per account and name. */
export function takeoverChallenge(
  deps: Deps,
  accountId: string,
  hostname: string,
): { method: 'dns_txt'; name: string; value: string } {
  const mac = createHmac('sha256', deps.secretsKey)
    .update(`route-takeover\0${accountId}\0${hostname}`)
    .digest('base64url')
    .slice(0, 32);
  return {
    method: 'dns_txt',
    name: `${TAKEOVER_PREFIX}.${hostname}`,
    value: `platform-takeover=${mac}`,
  };
}

/**
 * Another account holds `holder.hostname`, in any status. Whoever controls the name's DNS owns it:
 * with the caller's takeover record in place the holder's route is released (an event tells its
 * app) and the caller's is created; without it, 409 naming the record to create.
 */
async function takeOver(
  deps: Deps,
  trx: Executor,
  app: App,
  holder: NonNullable<Awaited<ReturnType<typeof hostnameHolder>>>,
  who: Who,
  provider: Provider | undefined,
): Promise<void> {
  const hostname = holder.hostname;
  const challenge = takeoverChallenge(deps, app.account_id, hostname);
  if (!(await txtHolds(deps.config, challenge.name, challenge.value)))
    throw new ApiError(
      'conflict',
      `${hostname} is held by another account. If the domain is yours, create TXT ${challenge.name} with the value "${challenge.value}" and add it again: the record proves the name is yours and releases it from the other account.`,
      { hostname, takeover: challenge },
    );
  const held = (holder.provider ?? null) as ProviderRecord | null;
  if (held && provider) await provider.remove(held.id);
  await updateRoute(trx, holder.id, {
    status: 'deleted',
    deleted_at: new Date(),
    next_check_at: null,
  });
  await recordEvents(trx, [
    {
      app_id: holder.app_id,
      account_id: holder.account_id,
      type: 'route.taken_over',
      severity: 'warn' as const,
      message: `${hostname} was released: another account proved through DNS that the name is theirs.`,
      metadata: { route_id: holder.id, route_type: holder.route_type, hostname },
      api_key_id: null,
      request_id: who.requestId,
    },
  ]);
}

/**
 * `PATCH .../routes/<route_id>` `{status}`: `disabled` from any enabled state; `active` from any
 * disabled one when the plan has the feature, room and active billing (the same checks as adding),
 * which brings a domain that was never verified back to `pending_dns`.
 */
export async function setRouteStatus(
  deps: Deps,
  app: App,
  routeId: string,
  status: 'active' | 'disabled',
  who: Who,
): Promise<RouteRow> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const current = await findRoute(trx, app.id, { id: routeId }, { lock: true });
    if (!current) throw errors.notFound('Route');
    const enabled = current.status === 'active' || current.status === 'pending_dns';
    if (status === 'disabled') {
      if (current.status === 'disabled') return current;
      if (!enabled)
        throw new ApiError('conflict', `This route is already disabled (${current.status}).`, {
          route_id: routeId,
          status: current.status,
        });
      const updated = await updateRoute(trx, routeId, {
        status: 'disabled',
        disabled_reason: 'Disabled by the owner.',
        next_check_at: null,
      });
      await recordEvents(trx, [
        event(
          app,
          who,
          'route.disabled',
          `${current.hostname} was disabled; the app's canonical origin keeps serving.`,
          { route_id: routeId, hostname: current.hostname },
        ),
      ]);
      return updated;
    }
    if (enabled) return current;
    await checkRoom(deps, trx, app.account_id, current.route_type, 'enabled');
    const now = new Date();
    const back = current.route_type === 'slug' || current.verified_at ? 'active' : 'pending_dns';
    const updated = await updateRoute(trx, routeId, {
      status: back,
      disabled_reason: null,
      ...(back === 'pending_dns'
        ? { check_attempts: 0, next_check_at: nextCheckAt(now, 0, now) }
        : {}),
    });
    await recordEvents(trx, [
      event(
        app,
        who,
        'route.enabled',
        back === 'active'
          ? `${current.hostname} serves this app again.`
          : `${current.hostname} was enabled; it serves once DNS is verified.`,
        { route_id: routeId, hostname: current.hostname, status: back },
      ),
    ]);
    return updated;
  });
  deps.signals.routeChanged(row.hostname);
  return row;
}

/** Removes an alias: the hostname answers 410 and is free to be claimed again; the provider's copy goes first. */
export async function removeRoute(
  deps: Deps,
  app: App,
  by: { hostname?: string; id?: string; type: 'slug' | 'custom_domain' },
  who: Who,
  provider: Provider | undefined = providerOf(deps.config),
): Promise<RouteRow> {
  const row = await findRoute(deps.db, app.id, by);
  if (!row) throw errors.notFound(by.type === 'slug' ? 'Slug' : 'Custom domain');
  const held = (row.provider ?? null) as ProviderRecord | null;
  if (held && provider) await provider.remove(held.id);
  const removed = await deps.db.transaction().execute(async (trx) => {
    const updated = await updateRoute(trx, row.id, {
      status: 'deleted',
      deleted_at: new Date(),
      next_check_at: null,
    });
    await recordEvents(trx, [
      event(app, who, 'route.removed', `${row.hostname} was removed from this app.`, {
        route_id: row.id,
        route_type: row.route_type,
        hostname: row.hostname,
      }),
    ]);
    return updated;
  });
  deps.signals.routeChanged(row.hostname);
  return removed;
}
