/**
 * `npm start`: the whole service in one process on Node. With no DATABASE_URL it starts the
 * embedded Postgres; PLATFORM_ROLE=api or worker runs one half only.
 */
import { serve } from '@hono/node-server';
import type { Runner } from 'graphile-worker';
import { startWorker } from '../worker/runner.ts';
import { boot } from './boot.ts';
import { ConfigError, loadConfig, publicUrl } from './config.ts';
import { createLogger } from './logger.ts';
import { createAppsPlane } from './runtime/routes.ts';
import { createServer, type Server } from './server.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const booted = await boot(config, { log });
  const { deps } = booted;

  let httpServer: ReturnType<typeof serve> | undefined;
  let worker: Runner | undefined;
  let server: Server | undefined;
  // One apps plane (caches and sandbox threads) serves both app origins and app jobs.
  const plane = createAppsPlane(deps);
  // Start the sandbox threads now, so the first request or job does not pay for them.
  await plane.sandbox().warm();
  if (config.role !== 'worker') {
    server = createServer(deps, { plane });
    const fetch = server.fetch;
    await new Promise<void>((resolve, reject) => {
      httpServer = serve({ fetch, port: config.port, hostname: config.host }, () => resolve());
      httpServer.once('error', reject);
    });
  }
  if (config.role !== 'api') worker = await startWorker(deps, plane);

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

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => {
      log.warn('shutdown took too long; exiting');
      void booted.embedded?.stop().finally(() => process.exit(1));
    }, 10_000);
    force.unref();
    const closing = httpServer ? new Promise<void>((resolve) => httpServer!.close(() => resolve())) : undefined;
    // Idle keep-alive sockets would hold close() open until they time out; requests in flight finish.
    (httpServer as unknown as { closeIdleConnections?: () => void } | undefined)?.closeIdleConnections?.();
    await Promise.all([closing, worker?.stop()]).catch((err) => log.error('error while stopping', { error: String(err) }));
    await plane.close();
    await booted.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`platform failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
