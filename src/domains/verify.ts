/**
 * Verifying a custom domain: the DNS checks (or the provider's status where one is configured) and
 * what they found, by the owner, by an operator, and in the background until it verifies or gives up.
 */
import type { Deps } from '../deps.ts';
import { ApiError, errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import { diagnose, type Diagnosis } from './dns-check.ts';
import { providerOf, type Provider } from './provider.ts';
import { isApex, hostnameParam } from './names.ts';
import { domainHolder, dueDomainChecks, findRoute, updateRoute, type RouteRow } from './queries.ts';
import type { ProviderRecord } from './schemas.ts';
import { type App, event, nextCheckAt, RECHECK_FOR_MS, type Who } from './service.ts';

export type VerifyOutcome = { row: RouteRow; diagnosis: Diagnosis | null };

/** Runs the checks (DNS, or the provider's status when one is configured) and records what they found. */
async function check(
  deps: Deps,
  row: RouteRow,
  provider: Provider | undefined,
): Promise<{ verified: boolean; diagnosis: Diagnosis; provider: ProviderRecord | null }> {
  const current = (row.provider ?? null) as ProviderRecord | null;
  if (provider && current) {
    const fresh = await provider.read(current.id);
    const ok =
      fresh.status === 'active' && (fresh.ssl_status === 'active' || fresh.ssl_status === null);
    const found = [
      `hostname ${fresh.status}`,
      `certificate ${fresh.ssl_status ?? 'unknown'}`,
      ...fresh.verification_errors,
    ];
    const message = ok
      ? 'Cloudflare has verified the hostname and issued its certificate.'
      : `Cloudflare reports the hostname ${fresh.status} and its certificate ${fresh.ssl_status ?? 'unknown'}: create the TXT records listed in dns_instructions, then verify again.${fresh.verification_errors.length ? ` Cloudflare says: ${fresh.verification_errors.join('; ')}` : ''}`;
    return {
      verified: ok,
      provider: fresh,
      diagnosis: {
        verified: ok,
        checks: [
          {
            check: 'provider',
            name: row.hostname,
            ok,
            blocking: true,
            expected: 'hostname active, certificate active',
            found,
            message,
          },
        ],
      },
    };
  }
  const diagnosis = await diagnose(deps.config, {
    hostname: row.hostname,
    apex: isApex(row.hostname),
    value: row.verification_token ?? '',
  });
  return { verified: diagnosis.verified, diagnosis, provider: current };
}

/**
 * `POST .../domains/<hostname>/verify`: a pending domain goes `active` when its checks pass;
 * otherwise 409 `domain_pending_verification` with every check. `operator`: `dns_verified`
 * from a platform operator (the admin command) skips the look-ups.
 */
export async function verifyDomain(
  deps: Deps,
  app: App,
  hostname: string,
  who: Who,
  options: { operator?: boolean; provider?: Provider; background?: boolean } = {},
): Promise<VerifyOutcome> {
  const provider = options.provider ?? providerOf(deps.config);
  const row = await findRoute(deps.db, app.id, { hostname, type: 'custom_domain' });
  if (!row) throw errors.notFound('Custom domain');
  if (row.status === 'active') return { row, diagnosis: null };
  if (row.status !== 'pending_dns') {
    throw new ApiError(
      'conflict',
      `${hostname} is ${row.status}; enable it (PATCH its route with {"status": "active"}) before verifying.`,
      { hostname, status: row.status, route_id: row.id },
    );
  }
  const result = options.operator ? null : await check(deps, row, provider);
  const now = new Date();
  const saved = await deps.db.transaction().execute(async (trx) => {
    const locked = await findRoute(trx, app.id, { id: row.id }, { lock: true });
    if (locked?.status !== 'pending_dns') return locked ?? row;
    const verified = options.operator || result!.verified;
    const attempts = locked.check_attempts + (options.background ? 1 : 0);
    const updated = await updateRoute(trx, row.id, {
      ...(result
        ? {
            last_check: { verified: result.verified, checks: result.diagnosis.checks },
            last_checked_at: now,
            provider: result.provider,
          }
        : {}),
      ...(verified
        ? { status: 'active', verified_at: now, next_check_at: null, disabled_reason: null }
        : {
            check_attempts: attempts,
            next_check_at: nextCheckAt(locked.created_at, attempts, now),
          }),
    });
    if (!verified && options.background && updated.next_check_at === null) {
      // an unverified name is not held for ever: released at the end of its check window
      const released = await updateRoute(trx, row.id, { status: 'deleted', deleted_at: now });
      await recordEvents(trx, [
        {
          ...event(
            app,
            who,
            'route.released',
            `${hostname} was not verified within ${RECHECK_FOR_MS / 86_400_000} days and was released; add it again once its DNS records are in place.`,
            { route_id: row.id, hostname },
          ),
          severity: 'warn' as const,
        },
      ]);
      return released;
    }
    if (verified) {
      const how = options.operator
        ? 'marked verified by a platform operator'
        : 'verified through DNS';
      await recordEvents(trx, [
        event(
          app,
          who,
          'route.verified',
          `Custom domain ${hostname} was ${how}; it serves this app now.`,
          { route_id: row.id, hostname, operator: Boolean(options.operator) },
        ),
      ]);
    }
    return updated;
  });
  if (saved.status === 'deleted') {
    const held = (saved.provider ?? null) as ProviderRecord | null;
    if (held && provider)
      await provider.remove(held.id).catch((e) =>
        deps.log.error('could not remove a released domain at the provider', {
          hostname,
          provider_id: held.id,
          error: (e as Error).message,
        }),
      );
  }
  if (saved.status === 'active' || saved.status === 'deleted') deps.signals.routeChanged(hostname);
  return { row: saved, diagnosis: result?.diagnosis ?? null };
}

/** The operator's `verify-domain`: marks a pending domain verified without DNS look-ups (local and test sites). */
export async function operatorVerify(
  deps: Deps,
  raw: string,
): Promise<{ route_id: string; app_id: string; hostname: string; status: string }> {
  const hostname = hostnameParam(raw);
  const row = await domainHolder(deps.db, hostname);
  if (!row) throw errors.notFound('Custom domain');
  const { row: saved } = await verifyDomain(
    deps,
    { id: row.app_id, account_id: row.account_id },
    hostname,
    { apiKeyId: null, requestId: null },
    { operator: true },
  );
  return {
    route_id: saved.id,
    app_id: saved.app_id,
    hostname: saved.hostname,
    status: saved.status,
  };
}

/** The background re-check of pending domains (worker task `domains_recheck`): each due one once. */
export async function recheckDueDomains(
  deps: Deps,
  now = new Date(),
): Promise<{ checked: number; verified: number }> {
  const out = { checked: 0, verified: 0 };
  for (const row of await dueDomainChecks(deps.db, now, 200)) {
    out.checked++;
    try {
      const r = await verifyDomain(
        deps,
        { id: row.app_id, account_id: row.account_id },
        row.hostname,
        { apiKeyId: null, requestId: null },
        { background: true },
      );
      if (r.row.status === 'active') out.verified++;
    } catch (err) {
      deps.log.warn('domain re-check failed', {
        hostname: row.hostname,
        error: (err as Error).message,
      });
    }
  }
  return out;
}

/** 409 `domain_pending_verification` naming what each check expected and found. */
export function pendingError(row: RouteRow, diagnosis: Diagnosis | null): ApiError {
  const failing = (diagnosis?.checks ?? []).filter((c) => c.blocking && !c.ok);
  return new ApiError(
    'domain_pending_verification',
    `${row.hostname} is not verified yet: ${failing.map((c) => c.message).join(' ') || 'verification is incomplete.'}`,
    {
      route_id: row.id,
      hostname: row.hostname,
      status: row.status,
      checks: diagnosis?.checks ?? [],
      next_check_at: row.next_check_at?.toISOString() ?? null,
    },
  );
}
