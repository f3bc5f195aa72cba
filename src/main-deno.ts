/**
 * Deno 2 entry: the same server source served with `Deno.serve`. It runs the HTTP API
 * (PLATFORM_ROLE=api semantics); run the worker under Node (`PLATFORM_ROLE=worker npm start`).
 *
 *   DATABASE_URL=postgres://... deno task start
 */
import { boot } from './boot.ts';
import { loadConfig, publicUrl } from './config.ts';
import { createLogger } from './logger.ts';
import { createServer } from './server.ts';

declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(
    options: { port: number; hostname: string; onListen?: () => void },
    handler: (req: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
  addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code: number): never;
};

const config = loadConfig(Deno.env.toObject());
const log = createLogger(config.logLevel);
const booted = await boot(config, { log });
const server = createServer(booted.deps);
const http = Deno.serve(
  {
    port: config.port,
    hostname: config.host,
    onListen: () => console.log(`platform (deno) API on ${publicUrl(config, config.hosts.api)}`),
  },
  server.fetch,
);
const stop = async () => {
  await http.shutdown();
  await booted.close();
  Deno.exit(0);
};
Deno.addSignalListener('SIGINT', () => void stop());
Deno.addSignalListener('SIGTERM', () => void stop());
