/**
 * What an app origin needs to answer without touching the database on a hot path:
 * - the live release of each app (dropped at once by signals: this node's own changes, and other nodes'
 *   through the change feed's triggers; revalidated after `LIVE_TTL_MS` as a safety net),
 * - each release's file table (releases are immutable: cached until evicted),
 * - file bytes by content hash (bounded by size),
 * - decrypted secrets per app (dropped on change; live-secrets.ts).
 */
import { LRUCache } from 'lru-cache';
import { isServerSource, manifestOf } from '../manifest/stored.ts';
import { blobStore } from '../blobs/store.ts';
import type { Deps } from '../deps.ts';
import type { Manifest } from '../manifest/schema.ts';
import { etagOf } from '../lib/etag.ts';
import { planOf } from '../plans/catalogue.ts';
import {
  appPointer,
  firstSight,
  previewPointer,
  releaseFiles,
  releaseVariants,
  releaseWithAccount,
} from './queries.ts';
import { createSecretsCache } from './live-secrets.ts';
import {
  type Bindings,
  type GuestBindings,
  guestBindings,
  NO_BINDINGS,
} from '../bindings/declared.ts';
import type { AssetRules, WorkersAssets } from './asset-rules.ts';
import { loadReleaseSettings } from './release-settings.ts';

/** Whether a release declares app users (auth.mode app_users). */
export function appUsersEnabled(view: { manifest: Manifest }): boolean {
  return view.manifest.resources.auth?.mode === 'app_users';
}

/**
 * How old a cached live pointer or secret set may be before a request revalidates it (in the background).
 * Changes arrive through the change feed at once; this is only the safety net, so it is not a query per request.
 */
export const LIVE_TTL_MS = 10_000;
/** Files larger than this are streamed from storage on every request instead of cached. */
const MAX_CACHED_FILE = 4 * 1024 * 1024;

/** What stops an app from serving, worst first (operator flags; docs/decisions/plans-and-billing.md). */
export type ServingBlock = 'app_takedown' | 'account_suspended' | 'app_suspended';
export type LiveApp = {
  appId: string;
  accountId: string;
  releaseId: string;
  planKey: string;
  /** the plan's requests.monthly.max, read once per load (the hot path compares against it) */
  monthlyRequests: number;
  block: ServingBlock | null;
  /** a preview's: links issued before it open none of the app's previews */
  previewsRevokedAt?: Date | null;
};

export function servingBlock(row: {
  account_suspended: boolean;
  app_flags: string[] | null;
}): ServingBlock | null {
  const flags = row.app_flags ?? [];
  if (flags.includes('takedown')) return 'app_takedown';
  if (row.account_suspended) return 'account_suspended';
  if (flags.includes('suspended')) return 'app_suspended';
  return null;
}
/** A stored compressed form of a file: its own bytes, hash and strong ETag. */
export type FileVariant = {
  encoding: 'br' | 'gzip';
  sha256: Buffer;
  etag: string;
  size: number;
  sizeText: string;
};
export type ReleaseFile = {
  path: string;
  contentType: string;
  sha256: Buffer;
  etag: string;
  size: number;
  sizeText: string;
  /** brotli and gzip forms when publishing made them (compressible types); absent otherwise */
  variants?: { br?: FileVariant; gzip?: FileVariant };
};
export type ReleaseView = {
  releaseId: string;
  appId: string;
  accountId: string;
  manifest: Manifest;
  /**
   * Where static files are looked up (`runtime.static_root`), or null when that is build output
   * (`.platform/`: the CLI's server bundle and source map), which is never served as static files.
   */
  staticRoot: string | null;
  files: Map<string, ReleaseFile>;
  /** Raw request path → the static file it resolves to directly (null: none), filled by the hot path. */
  resolved: Map<string, ReleaseFile | null>;
  /** The static root's `_redirects` and `_headers` (asset-rules.ts), or null when it has neither. */
  assetRules: AssetRules | null;
  /** A Workers project's `assets` settings (`.platform/assets.json`), or null. */
  workersAssets: WorkersAssets | null;
  /** What `.platform/bindings.json` declares (checked at publish). */
  bindings: Bindings;
};

export type RuntimeCaches = ReturnType<typeof createRuntimeCaches>;

function staticRootOf(manifest: Manifest): string | null {
  const root = manifest.runtime.static_root;
  return root === '.platform' || root.startsWith('.platform/') ? null : root;
}

/** What a release declares that shapes `ctx` in its sandbox. */
export function sandboxFlags(view: { manifest: Manifest; bindings?: Bindings }): {
  appUsers: boolean;
  publicStores: string[];
  bindings?: GuestBindings;
} {
  const stores = view.manifest.resources.files?.stores ?? {};
  const bindings = view.bindings ? guestBindings(view.bindings) : {};
  return {
    appUsers: appUsersEnabled(view),
    publicStores: Object.keys(stores).filter((k) => stores[k]!.public === true),
    ...(Object.keys(bindings).length ? { bindings } : {}),
  };
}

export function createRuntimeCaches(deps: Deps) {
  const live = new LRUCache<string, { app: LiveApp | null; at: number }>({ max: 50_000 });
  const releases = new LRUCache<string, ReleaseView>({ max: 2_000 });
  const blobs = new LRUCache<string, Buffer>({
    maxSize: Math.max(1, deps.config.staticCacheBytes),
    sizeCalculation: (b) => Math.max(1, b.length),
  });
  const secrets = createSecretsCache(deps, LIVE_TTL_MS);
  // a preview release served at its own origin, as a LiveApp whose release is the preview
  const previews = new LRUCache<string, { app: LiveApp | null; at: number }>({ max: 2_000 });
  deps.signals.onAppChanged((id) => {
    live.delete(id);
    for (const [key, hit] of previews.entries()) if (hit.app?.appId === id) previews.delete(key);
  });
  deps.signals.onAccountChanged((accountId) => {
    for (const cache of [live, previews])
      for (const [key, hit] of cache.entries())
        if (hit.app?.accountId === accountId) cache.delete(key);
  });

  const loading = new Map<string, Promise<LiveApp | null>>();
  let blobHits = 0;
  let blobMisses = 0;

  /** The live app a pointer row describes (null: nothing is published there). */
  function liveOf(
    row:
      | {
          id: string;
          account_id: string;
          live_release_id: string | null;
          deleted_at: unknown;
          plan_key: string;
          account_suspended: boolean;
          app_flags: string[] | null;
        }
      | undefined,
  ): LiveApp | null {
    return row?.live_release_id && !row.deleted_at
      ? {
          appId: row.id,
          accountId: row.account_id,
          releaseId: row.live_release_id,
          planKey: row.plan_key,
          monthlyRequests: planOf(deps.config.plans, row.plan_key).limits['requests.monthly.max'],
          block: servingBlock(row),
        }
      : null;
  }

  /** One query per app at a time, however many requests are waiting for it. */
  function loadLive(appId: string): Promise<LiveApp | null> {
    let p = loading.get(appId);
    if (!p) {
      p = appPointer(deps.db, appId)
        .then(async (row) => {
          const app = liveOf(row);
          live.set(appId, { app, at: Date.now() });
          return app;
        })
        .finally(() => loading.delete(appId));
      loading.set(appId, p);
    }
    return p;
  }

  /**
   * An app with nothing cached (its first request on this node, or the first after a change): one
   * statement reads the pointer and what serving it reads next (the live release, its files and
   * variants, the secrets unless cached, the server sources' bytes), where three round trips one
   * after another did (`firstSight`). What it brings is cached as the separate reads would cache it.
   */
  function loadFirst(appId: string): Promise<LiveApp | null> {
    let p = loading.get(appId);
    if (!p) {
      const withSecrets = secrets.wanted(appId);
      p = firstSight(deps.db, appId, withSecrets, MAX_CACHED_FILE)
        .then(async (row) => {
          const app = liveOf(row);
          if (row && withSecrets && !secrets.cached(appId))
            secrets.open(
              appId,
              (row.secrets ?? []).map((x) => ({
                name: x.name,
                sealed: Buffer.from(x.sealed, 'base64'),
              })),
            );
          if (app && row?.manifest && !releases.has(app.releaseId)) {
            const files = (row.files ?? []).map((f) => ({
              ...f,
              sha256: Buffer.from(f.sha256, 'hex'),
            }));
            const variants = (row.variants ?? []).map((v) => ({
              ...v,
              sha256: Buffer.from(v.sha256, 'hex'),
              variant_sha256: Buffer.from(v.variant_sha256, 'hex'),
            }));
            const view = viewOf(
              {
                id: app.releaseId,
                app_id: appId,
                account_id: app.accountId,
                manifest: row.manifest,
              },
              files,
              variants,
            );
            await loadAssetRules(view);
            releases.set(app.releaseId, view);
          }
          for (const src of row?.sources ?? []) {
            const etag = etagOf(Buffer.from(src.sha256, 'hex'));
            if (!blobs.has(etag)) blobs.set(etag, Buffer.from(src.data, 'base64'));
          }
          live.set(appId, { app, at: Date.now() });
          return app;
        })
        .finally(() => loading.delete(appId));
      loading.set(appId, p);
    }
    return p;
  }

  /**
   * The cached live release without I/O. A stale entry is still returned (at most one revalidation
   * interval plus one query old) while a single background query refreshes it; undefined when
   * nothing is cached (or a signal dropped it) and the caller must wait for liveApp().
   */
  function liveAppCached(appId: string): LiveApp | null | undefined {
    const hit = live.get(appId);
    if (!hit) return undefined;
    if (Date.now() - hit.at >= LIVE_TTL_MS) void loadLive(appId).catch(() => {});
    return hit.app;
  }

  async function liveApp(appId: string): Promise<LiveApp | null> {
    const cached = liveAppCached(appId);
    return cached !== undefined ? cached : loadFirst(appId);
  }

  /**
   * A preview release of an app as the app it serves (null: not a servable preview of that app, or
   * the app is unpublished). Cached like a live pointer; the app's changes drop it.
   */
  async function previewApp(appId: string, releaseId: string): Promise<LiveApp | null> {
    const key = `${appId}/${releaseId}`;
    const hit = previews.get(key);
    if (hit && Date.now() - hit.at < LIVE_TTL_MS) return hit.app;
    const row = await previewPointer(deps.db, appId, releaseId);
    const found = liveOf(row);
    const app = found && { ...found, previewsRevokedAt: row!.previews_revoked_at };
    previews.set(key, { app, at: Date.now() });
    return app;
  }

  /** A release's view from its rows. */
  function viewOf(
    row: { id: string; app_id: string; account_id: string; manifest: unknown },
    files: { path: string; content_type: string; sha256: Buffer; size: number }[],
    variantRows: {
      sha256: Buffer;
      encoding: 'br' | 'gzip';
      variant_sha256: Buffer | null;
      size: number | null;
    }[],
  ): ReleaseView {
    const variants = new Map<string, { br?: FileVariant; gzip?: FileVariant }>();
    for (const v of variantRows) {
      const key = v.sha256.toString('hex');
      const e = variants.get(key) ?? {};
      e[v.encoding] = {
        encoding: v.encoding,
        sha256: v.variant_sha256!,
        etag: etagOf(v.variant_sha256!),
        size: Number(v.size),
        sizeText: String(v.size),
      };
      variants.set(key, e);
    }
    const manifest = manifestOf(row.manifest);
    return {
      releaseId: row.id,
      appId: row.app_id,
      accountId: row.account_id,
      manifest,
      staticRoot: staticRootOf(manifest),
      files: new Map(
        files.map((f) => {
          const file: ReleaseFile = {
            path: f.path,
            contentType: f.content_type,
            sha256: f.sha256,
            etag: etagOf(f.sha256),
            size: Number(f.size),
            sizeText: String(f.size),
          };
          const v = variants.get(f.sha256.toString('hex'));
          if (v) file.variants = v;
          return [f.path, file];
        }),
      ),
      resolved: new Map(),
      assetRules: null,
      workersAssets: null,
      bindings: NO_BINDINGS,
    };
  }

  const loadAssetRules = (view: ReleaseView) =>
    loadReleaseSettings(view, (file) => bytes(view.accountId, file));

  async function release(releaseId: string): Promise<ReleaseView | undefined> {
    const hit = releases.get(releaseId);
    if (hit) return hit;
    // one round trip: the three queries run side by side on the pool's connections
    const [row, files, variantRows] = await Promise.all([
      releaseWithAccount(deps.db, releaseId),
      releaseFiles(deps.db, releaseId),
      releaseVariants(deps.db, releaseId),
    ]);
    if (!row) return undefined;
    const view = viewOf(row, files, variantRows);
    await loadAssetRules(view);
    releases.set(releaseId, view);
    return view;
  }

  async function bytes(
    accountId: string,
    file: Pick<ReleaseFile, 'etag' | 'sha256'>,
  ): Promise<Buffer> {
    const key = file.etag;
    const hit = blobs.get(key);
    if (hit) return (blobHits++, hit);
    blobMisses++;
    const data = await blobStore(deps.config).get(deps.db, accountId, file.sha256);
    if (!data) throw new Error(`blob ${key} of account ${accountId} is missing`);
    if (data.length <= MAX_CACHED_FILE) blobs.set(key, data);
    return data;
  }

  /**
   * What to answer with: the bytes (cached when small), or for a large file whose bytes are in the
   * object store, a stream straight from it (never held whole in memory).
   */
  async function body(
    accountId: string,
    file: Pick<ReleaseFile, 'etag' | 'sha256' | 'size'>,
  ): Promise<Buffer | ReadableStream<Uint8Array>> {
    const hit = blobs.get(file.etag);
    if (hit) return (blobHits++, hit);
    if (file.size <= MAX_CACHED_FILE) return bytes(accountId, file);
    blobMisses++;
    const opened = await blobStore(deps.config).open(deps.db, accountId, file.sha256);
    if (!opened) throw new Error(`blob ${file.etag} of account ${accountId} is missing`);
    return 'stream' in opened ? opened.stream : opened.bytes;
  }

  /** The server module sources of a release: its JavaScript files, by path. */
  async function sources(view: ReleaseView): Promise<Record<string, string>> {
    const server = [...view.files.values()].filter((f) => isServerSource(f.path, f.contentType));
    const texts = await Promise.all(
      server.map(async (f) => (await bytes(view.accountId, f)).toString('utf8')),
    );
    return Object.fromEntries(server.map((f, i) => [f.path, texts[i]!]));
  }

  const releaseCached = (releaseId: string) => releases.get(releaseId);
  const bytesCached = (file: Pick<ReleaseFile, 'etag'>) => blobs.get(file.etag);

  /** Drops every live pointer and decrypted secret (changes may have been missed): each is read again on next use. */
  function forgetLive(): void {
    live.clear();
    previews.clear();
    secrets.forget();
  }

  return {
    liveApp,
    liveAppCached,
    previewApp,
    release,
    releaseCached,
    bytes,
    bytesCached,
    body,
    sources,
    appSecrets: secrets.appSecrets,
    forgetLive,
    /** the file-bytes cache, for /metrics: what it holds and how reads went since start */
    blobCacheStats: () => ({
      bytes: blobs.calculatedSize,
      entries: blobs.size,
      hits: blobHits,
      misses: blobMisses,
    }),
  };
}
