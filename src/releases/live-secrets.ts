/**
 * Decrypted secrets per app for the app origin and the worker: opened once, cached, dropped when they
 * change (this node's signal, other nodes' through the change feed), and revalidated after the
 * live release's TTL. A secret that does not open is left out and reported.
 */
import { LRUCache } from 'lru-cache';
import { findApp } from '../apps/queries.ts';
import type { Deps } from '../deps.ts';
import { recordEvents } from '../events/record.ts';
import { open, secretAad } from '../secrets/crypto.ts';
import { sealedSecrets } from './queries.ts';

/** `ttlMs`: after this long a cached app's secrets are read again in the background (live.ts's `LIVE_TTL_MS`). */
export function createSecretsCache(deps: Deps, ttlMs: number) {
  const secrets = new LRUCache<string, { values: Record<string, string>; at: number }>({
    max: 10_000,
  });
  deps.signals.onSecretsChanged((id) => secrets.delete(id));
  const loadingSecrets = new Map<string, Promise<Record<string, string>>>();
  /** Opens an app's sealed secrets and caches them. */
  function openSecrets(
    appId: string,
    rows: { name: string; sealed: Buffer }[],
  ): Record<string, string> {
    const values: Record<string, string> = {};
    const unreadable: string[] = [];
    for (const r of rows) {
      try {
        values[r.name] = open(deps.secretsKey, secretAad(appId, r.name), r.sealed);
      } catch {
        unreadable.push(r.name); // left out: get() is undefined and require() throws, never an empty value
      }
    }
    if (unreadable.length) void reportUnreadable(appId, unreadable);
    secrets.set(appId, { values, at: Date.now() });
    return values;
  }
  function loadSecrets(appId: string): Promise<Record<string, string>> {
    let p = loadingSecrets.get(appId);
    if (!p) {
      p = sealedSecrets(deps.db, appId)
        .then((rows) => openSecrets(appId, rows))
        .finally(() => loadingSecrets.delete(appId));
      loadingSecrets.set(appId, p);
    }
    return p;
  }

  /** A secret that does not open (a damaged row or a foreign key): the operator's log and the app's events say so. */
  async function reportUnreadable(appId: string, names: string[]): Promise<void> {
    deps.log.error('app secrets could not be decrypted (check PLATFORM_SECRETS_KEY)', {
      app_id: appId,
      secrets: names,
    });
    const app = await findApp(deps.db, appId);
    if (!app) return;
    await recordEvents(deps.db, [
      {
        app_id: appId,
        account_id: app.account_id,
        type: 'runtime.log.error',
        severity: 'error',
        message: `Secret(s) ${names.join(', ')} could not be decrypted; set them again or ask the operator to check PLATFORM_SECRETS_KEY.`,
        metadata: { secrets: names },
      },
    ]).catch(() => {});
  }

  /** Decrypted secrets of an app: same stale-while-revalidate rule as the live release. */
  async function appSecrets(appId: string): Promise<Record<string, string>> {
    const hit = secrets.get(appId);
    if (!hit) return loadSecrets(appId);
    if (Date.now() - hit.at >= ttlMs) void loadSecrets(appId).catch(() => {});
    return hit.values;
  }

  return {
    appSecrets,
    /** Neither cached nor being read: a first read of the app may bring them along (`firstSight`). */
    wanted: (appId: string) => !secrets.has(appId) && !loadingSecrets.has(appId),
    cached: (appId: string) => secrets.has(appId),
    /** Opens sealed secrets read elsewhere and caches them. */
    open: openSecrets,
    /** Drops every decrypted secret (changes may have been missed): each is read again on next use. */
    forget: () => secrets.clear(),
  };
}
