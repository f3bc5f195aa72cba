/**
 * The whole service started in this process from a Config: Postgres (embedded unless
 * DATABASE_URL), the HTTP server, the sandbox threads and the job worker. `npm start` runs it with
 * its signal handling (src/main.ts); `platform dev` runs it for itself (src/cli/dev/).
 */
import { startWorker, type JobWorker } from '../worker/runner.ts';
import { boot, type Booted } from './boot.ts';
import type { Config } from './config.ts';
import { listenHttp, type Listening } from './http/serve.ts';
import type { Logger } from './logger.ts';
import { createNodeRuntime, type NodeRuntime } from './runtime/node-runtime.ts';
import { startNodeHeartbeat, type NodeHeartbeat } from './nodes/heartbeat.ts';
import { createServer, type Server } from './server.ts';

export type Service = {
  booted: Booted;
  /** the port the HTTP server listens on (the configured one, or the one the OS chose for port 0) */
  port: number | undefined;
  /** Stops in order: HTTP server (requests in flight finish), worker, sandbox, then Postgres last. */
  stop(): Promise<void>;
  /** Closes open connections now (a second Ctrl-C). */
  hurry(): void;
};

/** Starts what `config.role` asks for on a booted database; a failure stops what had started, Postgres included. */
export async function startService(config: Config, log: Logger, booted?: Booted): Promise<Service> {
  booted ??= await boot(config, { log });
  const { deps } = booted;
  let httpServer: Listening | undefined;
  let worker: JobWorker | undefined;
  let runtime: NodeRuntime | undefined;
  let server: Server | undefined;
  let port: number | undefined;
  let heartbeat: NodeHeartbeat | undefined;
  let stopping: Promise<void> | undefined;

  const stop = () =>
    (stopping ??= (async () => {
      try {
        server?.apps.endStreams();
        // requests in flight finish; idle keep-alive connections close
        const results = await Promise.allSettled([httpServer?.close(), worker?.stop()]);
        for (const r of results)
          if (r.status === 'rejected')
            log.error('error while stopping', { error: String(r.reason) });
        await server?.close();
        await runtime?.close();
        await heartbeat?.stop();
      } catch (err) {
        log.error('error while stopping', { error: String(err) });
      } finally {
        // Postgres stops last, whatever happened above.
        await booted
          .close()
          .catch((err) => log.error('error while stopping Postgres', { error: String(err) }));
      }
    })());
  const hurry = () => httpServer?.hurry();

  try {
    // One runtime (caches, sandbox threads, change feed, meters) serves both app origins and app jobs.
    runtime = createNodeRuntime(deps);
    // Start the sandbox threads now, so the first request or job does not pay for them.
    await runtime.sandbox().warm();
    if (config.role !== 'worker') {
      server = createServer(deps, { runtime });
      httpServer = await listenHttp(server.fetch, {
        port: config.port,
        hostname: config.host,
        config,
      });
      port = httpServer.port;
    }
    if (config.role !== 'api') worker = await startWorker(deps, runtime);
    heartbeat = startNodeHeartbeat(deps, config.role);
  } catch (err) {
    await stop();
    throw err;
  }
  return { booted, port, stop, hurry };
}
