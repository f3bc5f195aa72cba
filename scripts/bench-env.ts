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

/** Serves `server` on a loopback port; `close` ends its connections, then the server. */
function listen(server: Server): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const s = serve({ fetch: server.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((r) => {
            (s as unknown as { closeAllConnections(): void }).closeAllConnections();
            s.close(() => r());
          }).then(() => server.close()),
      }),
    );
  });
}

/**
 * Another node of the same service (same database, so every app published to `env` is live on it)
 * with its own sandbox settings: a benchmark compares two of them in interleaved rounds.
 */
export async function startSiblingServer(
  env: BenchEnv,
  sandbox: Partial<Deps['config']['sandbox']>,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const config = { ...env.deps.config, sandbox: { ...env.deps.config.sandbox, ...sandbox } };
  const server = createServer({ ...env.deps, config });
  const { port, close } = await listen(server);
  return { url: `http://127.0.0.1:${port}`, server, close };
}

export async function startBenchEnv(options: { withServer?: boolean } = {}): Promise<BenchEnv> {
  const scratch = await scratchDatabase('bench', 45000);
  const dbUrl = scratch.url;
  // Sandbox settings pass through from the environment, so a benchmark can compare them.
  const sandboxEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        k.startsWith('PLATFORM_SANDBOX_') ||
        k === 'PLATFORM_PLANS_FILE' ||
        k === 'PLATFORM_ENGINE' ||
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
    ({ port, close } = await listen(server));
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

/** A static file of a benchmark's app: its path, type and text (or bytes). */
export type BenchFile = { path: string; type: string; body: string | Buffer };

/**
 * Publishes an app whose `server.js` is `source` (fallback `server`, static root `public/` holding
 * `files`): a new app, or a new release of `appId`. Throws when the publish is refused.
 */
export async function publishServerApp(
  env: BenchEnv,
  source: string,
  options: { name?: string; files?: BenchFile[]; appId?: string } = {},
): Promise<{ app_id: string; release_id: string; host: string }> {
  const file = (f: BenchFile) => ({
    path: f.path,
    content_type: f.type,
    content_base64: Buffer.from(f.body).toString('base64'),
  });
  const res = await fetch(`${env.url}/v0/apps${options.appId ? `/${options.appId}` : ''}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      app: { name: options.name ?? 'bench' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        ...(options.files ?? [{ path: 'public/robots.txt', type: 'text/plain', body: '' }]).map(
          file,
        ),
        file({ path: 'server.js', type: 'text/javascript', body: source }),
      ],
    }),
  });
  const body = (await res.json()) as { app_id?: string; release_id?: string };
  if (!body.app_id || !body.release_id) throw new Error(`publish failed: ${JSON.stringify(body)}`);
  return {
    app_id: body.app_id,
    release_id: body.release_id,
    host: `${body.app_id}.apps.localhost`,
  };
}
