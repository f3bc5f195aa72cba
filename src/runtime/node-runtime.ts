/**
 * A node's runtime: what runs app code and what every node keeps current, built once per process
 * (`service.ts`, or `createServer` alone in tests) and borrowed by the app origin (the request
 * path, `origin/`), the API routes, the metrics, `domains/tls.ts` and the job worker.
 */
import { appOrigin } from '../apps/mappers.ts';
import type { ModuleCheck } from '../apps/module-check.ts';
import type { Deps } from '../deps.ts';
import { createAnalyticsCollector, type AnalyticsCollector } from '../analytics/collector.ts';
import { createChangeFeed, type ChangeFeed } from '../changes/feed.ts';
import { createRouteTable, type RouteTable } from '../domains/table.ts';
import { createEventWriter, type EventWriter } from '../events/writer.ts';
import { largestCpuMs, planOf } from '../plans/catalogue.ts';
import { createRuntimeCaches, type RuntimeCaches } from '../releases/live.ts';
import { engineBuildId } from '../sandbox/engine.ts';
import { SandboxPool } from '../sandbox/pool.ts';
import type { PoolStats } from '../sandbox/pool-stats.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../sandbox/protocol.ts';
import { createRequestMeter, type RequestMeter } from '../usage/meter.ts';
import { createHttpCache, type HttpCache } from './http-cache.ts';
import { instanceFlags } from './invoke.ts';

export type NodeRuntime = {
  /** Live pointers, releases, files and secrets in memory, kept current by `feed` and the signals. */
  caches: RuntimeCaches;
  /** The sandbox threads, started on first use (or by `warm()`). */
  sandbox(): SandboxPool;
  /** the pool's figures, or null while nothing has started it (reading never starts it) */
  sandboxStats(): PoolStats | null;
  /** Host → app for slugs and custom domains (kept current across nodes by `feed`). */
  routes: RouteTable;
  /** Changes committed by any node (LISTEN/NOTIFY); `listen()` starts it once. */
  feed: ChangeFeed;
  listen(): void;
  /** Counts what app origins serve for the monthly quotas. */
  meter: RequestMeter;
  /** Counts what visitors did for app analytics (daily aggregates). */
  analytics: AnalyticsCollector;
  /** Writes runtime events in batches, after the answers (flushed at close). */
  events: EventWriter;
  /** The shared cache of answers apps mark cacheable (absent when turned off); app code's Cache API too. */
  httpCache: HttpCache | undefined;
  /** Loads a server module from a bundle's sources in the sandbox: ok, or why it does not load. */
  checkModule: ModuleCheck;
  close(): Promise<void>;
};

export function createNodeRuntime(deps: Deps): NodeRuntime {
  const caches = createRuntimeCaches(deps);
  let pool: SandboxPool | undefined;
  const sandbox = () =>
    (pool ??= new SandboxPool({
      workers: deps.config.sandbox.workers,
      ...(deps.config.sandbox.engine ? { engine: deps.config.sandbox.engine } : {}),
      // each call runs with its account plan's server.cpu_ms.max (invoke.ts); Free's is the default
      limits: {
        cpuMs: deps.config.plans.free.limits['server.cpu_ms.max'],
        memoryBytes: deps.config.sandbox.memoryBytes,
        stackBytes: DEFAULT_INSTANCE_LIMITS.stackBytes,
        wallMs: deps.config.sandbox.wallMs,
      },
      hardKillMs: Math.max(1000, largestCpuMs(deps.config.plans) * 3),
      workerMemoryBytes: deps.config.sandbox.workerMemoryBytes,
      ...(deps.config.sandbox.instanceBudgetBytes
        ? { instanceBudgetBytes: deps.config.sandbox.instanceBudgetBytes }
        : {}),
      onWorkerExit: (info) => deps.log.warn('sandbox worker replaced', info),
      // app code may fetch public addresses (and what the operator allows), never this platform's own hosts
      fetchPolicy: {
        allow: [...deps.config.sandbox.fetchAllow],
        denyHosts: Object.values(deps.config.hosts),
        dnsServers: [...deps.config.domains.dnsServers],
      },
    }));

  const feed = createChangeFeed(deps);
  const routes = createRouteTable({ db: deps.db, log: deps.log, feed });
  deps.signals.onRouteChanged((hostname) => routes.invalidate(hostname));
  // what other nodes changed reaches this node's caches as if it had changed it here
  feed.onChange((change) => {
    const id = typeof change.id === 'string' ? change.id : undefined;
    if (!id) return;
    if (change.kind === 'app') deps.signals.appChanged(id);
    else if (change.kind === 'secrets') deps.signals.secretsChanged(id);
    else if (change.kind === 'account') deps.signals.accountChanged(id);
  });
  // messages sent while the feed was away are lost: forget every cached pointer and secret
  feed.onResync(() => caches.forgetLive());
  let listening = false;

  const httpCache =
    deps.config.httpCache.bytes > 0 ? createHttpCache(deps.config.httpCache) : undefined;
  if (httpCache) {
    // what an app answered before a publish, rollback, unpublish or secret change is not its answer now
    deps.signals.onAppChanged((id) => httpCache.purge(id));
    deps.signals.onSecretsChanged((id) => httpCache.purge(id));
  }

  const checkModule: ModuleCheck = async (input) => {
    const keep = input.keepAs;
    const checkId = keep?.releaseId ?? `check_${crypto.randomUUID()}`;
    const engine = input.compile ? engineBuildId(sandbox().engine) : undefined;
    const result = await sandbox().invoke({
      handler: 'load',
      ...(engine ? { compile: true } : {}),
      // a kept instance is set up as the release's own calls set theirs up
      ...(keep ? { flags: instanceFlags(deps, keep) } : {}),
      app: {
        app_id: input.appId,
        origin: appOrigin(deps.config, input.appId),
        release_id: checkId,
      },
      release: { releaseId: checkId, entry: input.entry },
      loadSources: async () => input.sources,
      limits: { cpuMs: planOf(deps.config.plans, input.planKey).limits['server.cpu_ms.max'] },
      request: { method: 'GET', url: appOrigin(deps.config, input.appId), headers: [] },
      secrets: keep ? await caches.appSecrets(input.appId) : {},
    });
    if (!keep || !result.ok) sandbox().evict(checkId);
    if (result.ok) {
      const listed = result.response?.headers.find(([n]) => n === 'x-handlers')?.[1] ?? '';
      const body = result.response?.body;
      return {
        ok: true,
        handlers: listed ? listed.split(',') : [],
        ...(engine && body?.byteLength ? { bytecode: { engine, pack: new Uint8Array(body) } } : {}),
      };
    }
    return {
      ok: false,
      error: result.error?.message ?? 'the server module did not load',
      ...(result.error?.stack ? { stack: result.error.stack } : {}),
    };
  };
  checkModule.discard = (releaseId) => sandbox().evict(releaseId);

  const meter = createRequestMeter({
    db: deps.db,
    log: deps.log,
    flushMs: deps.config.usageFlushMs,
  });
  const analytics = createAnalyticsCollector({
    db: deps.db,
    log: deps.log,
    flushMs: deps.config.analyticsFlushMs,
  });
  const events = createEventWriter({ db: deps.db, log: deps.log });

  return {
    caches,
    sandbox,
    sandboxStats: () => pool?.stats() ?? null,
    routes,
    feed,
    listen() {
      if (listening) return;
      listening = true;
      void feed.start();
    },
    meter,
    analytics,
    events,
    httpCache,
    checkModule,
    async close() {
      routes.close();
      await feed.close();
      await meter.close();
      await analytics.close();
      await events.close();
      await pool?.close();
    },
  };
}
