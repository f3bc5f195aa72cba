/**
 * `npm start`: the whole service in one process on Node. With no DATABASE_URL it starts the
 * embedded Postgres; PLATFORM_ROLE=api or worker runs one half only.
 */
import { serve } from '@hono/node-server';
import type { Runner } from 'graphile-worker';
import { startWorker } from '../worker/runner.ts';
import { boot } from './boot.ts';
import { configOrExit, publicUrl } from './config.ts';
import { serverOptions } from './http/listen.ts';
import { createLogger } from './logger.ts';
import { createAppsPlane, type AppsPlane } from './origin/plane.ts';
import { createServer, type Server } from './server.ts';

async function main(): Promise<void> {
  const config = configOrExit(process.env);
  const log = createLogger(config.logLevel);

  // Signals are taken from the first moment: one that arrives while Postgres is starting stops the
  // service as soon as it is up, never leaving the cluster behind.
  let stop: ((reason: string, code: number) => Promise<void>) | undefined;
  let requested: string | undefined;
  let firstSignalAt = 0;
  let hurry: () => void = () => {};
  const onSignal = (signal: NodeJS.Signals) => {
    if (!firstSignalAt) {
      firstSignalAt = Date.now();
      requested = signal;
      void stop?.(signal, 0);
      return;
    }
    // npm forwards the signal its process group also received: the same stop, delivered twice.
    if (Date.now() - firstSignalAt < 1000) return;
    log.warn('second signal: closing open connections now; Postgres still stops last', { signal });
    hurry();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const booted = await boot(config, { log });
  const { deps } = booted;
  let httpServer: ReturnType<typeof serve> | undefined;
  let worker: Runner | undefined;
  let plane: AppsPlane | undefined;
  let stopping: Promise<void> | undefined;

  stop = (reason, code) => {
    stopping ??= (async () => {
      log.info('shutting down', { reason });
      const force = setTimeout(() => {
        log.warn('shutdown took too long; stopping Postgres and exiting');
        void booted.close().finally(() => process.exit(1));
      }, 10_000);
      force.unref();
      try {
        const closing = httpServer ? new Promise<void>((resolve) => httpServer!.close(() => resolve())) : undefined;
        // Idle keep-alive sockets would hold close() open until they time out; requests in flight finish.
        (httpServer as unknown as { closeIdleConnections?: () => void } | undefined)?.closeIdleConnections?.();
        const results = await Promise.allSettled([closing, worker?.stop()]);
        for (const r of results) if (r.status === 'rejected') log.error('error while stopping', { error: String(r.reason) });
        await plane?.close();
      } catch (err) {
        log.error('error while stopping', { error: String(err) });
      } finally {
        // Postgres stops last, whatever happened above.
        await booted.close().catch((err) => log.error('error while stopping Postgres', { error: String(err) }));
        clearTimeout(force);
        process.exit(code);
      }
    })();
    return stopping;
  };
  hurry = () => (httpServer as unknown as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  // A crash, during shutdown or at any other time, still stops Postgres before the process ends.
  const crash = (err: unknown) => {
    log.error('uncaught error; stopping', { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    void stop?.('crash', 1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  if (requested) return void stop(requested, 0);

  try {
    // One apps plane (caches and sandbox threads) serves both app origins and app jobs.
    plane = createAppsPlane(deps);
    // Start the sandbox threads now, so the first request or job does not pay for them.
    await plane.sandbox().warm();
    if (config.role !== 'worker') {
      const server: Server = createServer(deps, { plane });
      const fetch = server.fetch;
      await new Promise<void>((resolve, reject) => {
        httpServer = serve({ fetch, port: config.port, hostname: config.host, serverOptions: serverOptions(config) }, () => resolve());
        httpServer.once('error', reject);
      });
    }
    if (config.role !== 'api') worker = await startWorker(deps, plane);
  } catch (err) {
    process.stderr.write(`platform failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    return void stop('failed to start', 1);
  }
  if (requested) return void stop(requested, 0);

  const lines = [
    `platform is running (${config.role === 'all' ? 'HTTP server and worker' : config.role})`,
    config.role !== 'worker' ? `  API        ${publicUrl(config, config.hosts.api)}   (also http://localhost:${config.port})` : '',
    config.role !== 'worker' ? `  Console    ${publicUrl(config, config.hosts.console)}` : '',
    config.role !== 'worker' ? `  Apps       ${config.publicScheme}://<app_id>.${config.hosts.apps}${config.publicPort ? `:${config.publicPort}` : ''}` : '',
    config.role !== 'worker' ? `  API docs   ${publicUrl(config, config.hosts.docs)}   (OpenAPI at /openapi.json)` : '',
    `  Database   ${booted.embedded ? `embedded Postgres in ${config.dataDir}/postgres` : 'DATABASE_URL'}`,
    `  First API key: npm run admin -- create-user --email you@example.com`,
  ].filter(Boolean);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err) => {
  process.stderr.write(`platform failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
