/**
 * The whole service started in this process from a Config: Postgres (embedded unless
 * DATABASE_URL), the HTTP server, the sandbox threads and the job worker. `npm start` runs it with
 * its signal handling (src/main.ts); `platform dev` runs it for itself (src/cli/dev/).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { startWorker, type JobWorker } from '../worker/runner.ts';
import { boot, type Booted } from './boot.ts';
import type { Config } from './config.ts';
import { serverOptions } from './http/listen.ts';
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
  let httpServer: ReturnType<typeof serve> | undefined;
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
        const closing = httpServer
          ? new Promise<void>((resolve) => httpServer!.close(() => resolve()))
          : undefined;
        // Idle keep-alive sockets would hold close() open until they time out; requests in flight finish.
        (
          httpServer as unknown as { closeIdleConnections?: () => void } | undefined
        )?.closeIdleConnections?.();
        const results = await Promise.allSettled([closing, worker?.stop()]);
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
  const hurry = () =>
    (
      httpServer as unknown as { closeAllConnections?: () => void } | undefined
    )?.closeAllConnections?.();

  try {
    // One runtime (caches, sandbox threads, change feed, meters) serves both app origins and app jobs.
    runtime = createNodeRuntime(deps);
    // Start the sandbox threads now, so the first request or job does not pay for them.
    await runtime.sandbox().warm();
    if (config.role !== 'worker') {
      server = createServer(deps, { runtime });
      const app = server;
      await new Promise<void>((resolve, reject) => {
        httpServer = serve(
          {
            fetch: app.fetch,
            port: config.port,
            hostname: config.host,
            serverOptions: serverOptions(config),
          },
          (info: AddressInfo) => {
            port = info.port;
            resolve();
          },
        );
        httpServer.once('error', reject);
      });
    }
    if (config.role !== 'api') worker = await startWorker(deps, runtime);
    heartbeat = startNodeHeartbeat(deps, config.role);
  } catch (err) {
    await stop();
    throw err;
  }
  return { booted, port, stop, hurry };
}
