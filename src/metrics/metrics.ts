/**
 * `/metrics` in Prometheus's text format, through prom-client. Each service process has its own
 * registry (several may share one Node process in tests). The request path only adds to plain
 * numbers (request-metrics.ts); everything is read when Prometheus scrapes:
 * the sandbox pool's counters, the job queue (one SQL query), the event writer, the Postgres pool
 * and the file-bytes cache. No label carries an app or account id: cardinality stays fixed.
 */
import client from 'prom-client';
import type { Deps } from '../deps.ts';
import { jobQueueCounts } from '../jobs/queue-stats.ts';
import { lastBackupTimes } from '../backups/runs.ts';
import { sharesOf } from '../db/fair-share.ts';
import type { NodeRuntime } from '../runtime/node-runtime.ts';
import { createRequestMetrics } from './request-metrics.ts';

export type HostKindLabel = 'api' | 'console' | 'docs' | 'app' | 'custom' | 'unknown';

export type Metrics = {
  registry: client.Registry;
  /** one answered request: its host kind, status and when it began (performance.now()) */
  observe(kind: HostKindLabel, status: number, startedMs: number): void;
};

export function createMetrics(deps: Deps, runtime: NodeRuntime): Metrics {
  const registry = new client.Registry();
  // process CPU, memory, event-loop lag and GC (Deno 2 gives all but the GC figures)
  client.collectDefaultMetrics({ register: registry });

  const requests = createRequestMetrics(registry);

  const pool = (
    name: string,
    help: string,
    read: (s: NonNullable<ReturnType<NodeRuntime['sandboxStats']>>) => number,
    type: 'gauge' | 'counter' = 'gauge',
  ) => {
    const collect = function (this: client.Gauge | client.Counter) {
      const s = runtime.sandboxStats();
      const v = s ? read(s) : 0;
      if (this instanceof client.Gauge) this.set(v);
      else {
        this.reset();
        this.inc(v);
      }
    };
    if (type === 'gauge') new client.Gauge({ name, help, registers: [registry], collect });
    else new client.Counter({ name, help, registers: [registry], collect });
  };
  pool('platform_sandbox_workers', 'Sandbox worker threads alive', (s) => s.workers);
  pool(
    'platform_sandbox_warm_releases',
    'Releases whose code a sandbox worker holds (warm instances)',
    (s) => s.warmReleases,
  );
  pool(
    'platform_sandbox_calls_in_flight',
    'Server calls sent to a worker and not yet answered',
    (s) => s.inFlight,
  );
  pool(
    'platform_sandbox_calls_waiting',
    "Server calls waiting for their release's turn",
    (s) => s.waiting,
  );
  pool(
    'platform_sandbox_instances',
    'Warm app instances held by the sandbox workers',
    (s) => s.instances,
  );
  pool(
    'platform_sandbox_instance_memory_bytes',
    'Memory the warm app instances were last measured to hold (QuickJS heaps)',
    (s) => s.instanceBytes,
  );
  pool(
    'platform_sandbox_wasm_memory_bytes',
    "The sandbox workers' WebAssembly memory, which holds every instance's heap and never shrinks",
    (s) => s.wasmBytes,
  );
  pool(
    'platform_sandbox_calls_total',
    'Server calls answered by the sandbox',
    (s) => s.calls,
    'counter',
  );
  pool(
    'platform_sandbox_cpu_seconds_total',
    'CPU time billed to app code',
    (s) => s.cpuMs / 1000,
    'counter',
  );
  pool(
    'platform_sandbox_queued_calls_total',
    "Calls that waited for their release's turn",
    (s) => s.queued,
    'counter',
  );
  pool(
    'platform_sandbox_queue_wait_seconds_total',
    "Time calls spent waiting for their release's turn",
    (s) => s.queueWaitMs / 1000,
    'counter',
  );
  pool(
    'platform_sandbox_overloaded_total',
    "Calls refused because their release's queue was full or the wait ran out",
    (s) => s.overloaded,
    'counter',
  );
  pool(
    'platform_outbound_fetches_total',
    'Outbound fetches by app code that were answered',
    (s) => s.fetchesOk,
    'counter',
  );
  pool(
    'platform_outbound_fetch_failures_total',
    'Outbound fetches by app code that failed or were refused',
    (s) => s.fetchesFailed,
    'counter',
  );
  new client.Counter({
    name: 'platform_sandbox_workers_replaced_total',
    help: 'Sandbox workers replaced, by why (poisoned: out of memory or a crash; watchdog: guest code did not yield)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = runtime.sandboxStats();
      if (s) for (const [reason, n] of Object.entries(s.retired)) this.inc({ reason }, n);
    },
  });

  const jobs = new client.Gauge({
    name: 'platform_jobs',
    help: 'Jobs in the queue by state (ready: runnable now; failed: used up their attempts)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const q = await jobQueueCounts(deps.db);
      for (const state of ['ready', 'scheduled', 'running', 'failed'] as const)
        this.set({ state }, q[state]);
      lag.set(q.oldest_ready_seconds ?? 0);
    },
  });
  const lag = new client.Gauge({
    name: 'platform_jobs_lag_seconds',
    help: 'How long the oldest runnable job has waited (0: none is waiting)',
    registers: [registry],
  });
  void jobs;

  new client.Gauge({
    name: 'platform_app_db_calls',
    help: "App code's platform calls by state (running: holding one of the apps' database turns; waiting: queued for one)",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const s = sharesOf(deps.pool);
      this.set({ state: 'running' }, s.running());
      this.set({ state: 'waiting' }, s.waiting());
    },
  });
  new client.Counter({
    name: 'platform_app_db_calls_refused_total',
    help: "App code's platform calls refused because no database turn came before their call's wall-clock limit",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sharesOf(deps.pool).stats.refused);
    },
  });
  const backupAt = new client.Gauge({
    name: 'platform_backup_last_finished_timestamp_seconds',
    help: 'When the newest backup of each result finished, Unix seconds (0: none yet); alert on a failure newer than the last success',
    labelNames: ['result'] as const,
    registers: [registry],
    async collect() {
      const t = await lastBackupTimes(deps.db);
      this.set({ result: 'succeeded' }, t.succeeded ? t.succeeded.getTime() / 1000 : 0);
      this.set({ result: 'failed' }, t.failed ? t.failed.getTime() / 1000 : 0);
    },
  });
  void backupAt;

  new client.Gauge({
    name: 'platform_event_writer_queued',
    help: 'Runtime events waiting to be written',
    registers: [registry],
    collect() {
      this.set(runtime.events.queued());
    },
  });
  new client.Gauge({
    name: 'platform_pg_pool_connections',
    help: "This process's Postgres pool by state",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = deps.pool;
      this.set({ state: 'total' }, p.totalCount);
      this.set({ state: 'idle' }, p.idleCount);
      this.set({ state: 'waiting' }, p.waitingCount);
    },
  });
  const cache = () => runtime.caches.blobCacheStats();
  new client.Gauge({
    name: 'platform_blob_cache_bytes',
    help: 'Bytes of release files held in memory',
    registers: [registry],
    collect() {
      this.set(cache().bytes);
    },
  });
  new client.Counter({
    name: 'platform_blob_cache_reads_total',
    help: 'Reads of release file bytes by result (hit: from memory; miss: from the blob store)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const c = cache();
      this.reset();
      this.inc({ result: 'hit' }, c.hits);
      this.inc({ result: 'miss' }, c.misses);
    },
  });
  const answers = () => runtime.httpCache?.stats() ?? { bytes: 0, entries: 0, hits: 0, misses: 0 };
  new client.Gauge({
    name: 'platform_http_cache_bytes',
    help: 'Bytes of app answers held by the shared cache of app origins',
    registers: [registry],
    collect() {
      this.set(answers().bytes);
    },
  });
  new client.Counter({
    name: 'platform_http_cache_lookups_total',
    help: 'Lookups of the shared cache of app origins by result (hit: answered without running the app)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const c = answers();
      this.reset();
      this.inc({ result: 'hit' }, c.hits);
      this.inc({ result: 'miss' }, c.misses);
    },
  });

  return {
    registry,
    observe(kind, status, startedMs) {
      requests.record(kind, status, (performance.now() - startedMs) / 1000);
    },
  };
}
