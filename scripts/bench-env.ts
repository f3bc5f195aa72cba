/**
 * Shared set-up for benchmarks: a private embedded Postgres (or DATABASE_URL), a fresh migrated
 * database, the real server on a loopback port, and a user with an API key on the `internal` plan
 * (so no plan limit or monthly quota cuts a benchmark short; each call still runs under the
 * sandbox's limits, with internal's CPU time per call).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { scratchDatabase } from './_lib/scratch-db.ts';
import { loadConfig } from '../src/config.ts';
import { createDb, createPool } from '../src/db/database.ts';
import type { Deps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { createSignals } from '../src/signals.ts';
import { createServer, type Server } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { setPlan } from '../src/plans/operator.ts';

export type BenchEnv = {
  deps: Deps;
  url: string;
  port: number;
  apiKey: string;
  server: Server | undefined;
  close(): Promise<void>;
};

export async function startBenchEnv(options: { withServer?: boolean } = {}): Promise<BenchEnv> {
  const scratch = await scratchDatabase('bench', 45000);
  const dbUrl = scratch.url;
  // Sandbox settings pass through from the environment, so a benchmark can compare them.
  const sandboxEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        k.startsWith('PLATFORM_SANDBOX_') ||
        k === 'PLATFORM_PLANS_FILE' ||
        k === 'PLATFORM_USAGE_FLUSH_MS',
    ),
  ) as Record<string, string>;
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
    PLATFORM_LOG_LEVEL: 'warn',
    PORT: '8787',
    ...sandboxEnv,
  });
  const pool = createPool(dbUrl, 20);
  const deps: Deps = {
    config,
    pool,
    db: createDb(pool),
    log: createLogger('warn'),
    secretsKey: Buffer.from(config.secretsKey!, 'hex'),
    signals: createSignals(),
  };
  const user = await createUser(deps.db, { email: `bench-${process.pid}@example.com` });
  await setPlan(deps, { accountId: user.account_id, planKey: 'internal' });
  let close = async () => {};
  let port = 0;
  let server: Server | undefined;
  if (options.withServer !== false) {
    server = createServer(deps);
    const s0 = server;
    await new Promise<void>((resolve) => {
      const s = serve({ fetch: s0.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
        port = info.port;
        resolve();
      });
      close = () =>
        new Promise<void>((r) => {
          (s as unknown as { closeAllConnections(): void }).closeAllConnections();
          s.close(() => r());
        }).then(() => s0.close());
    });
  }
  return {
    deps,
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    apiKey: user.api_key,
    async close() {
      await close();
      await deps.db.destroy();
      await scratch.close();
    },
  };
}
