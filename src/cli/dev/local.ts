/**
 * `platform dev`'s own service: the whole platform in this process on an embedded Postgres in a
 * data directory of its own (never the app folder), signed in with a local development key.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { freePort, portIsFree } from '../../lib/ports.ts';

export type LocalService = {
  apiUrl: string;
  apiKey: string;
  accountId: string;
  appsUrl: (appId: string) => string;
  dataDir: string;
  stop(): Promise<void>;
};

const DEV_EMAIL = 'dev@dev.localhost';
export const RUNNING_FILE = 'dev-service.json';
export const KEY_FILE = 'dev-key.json';

export function defaultDataDir(): string {
  const base = process.env.XDG_DATA_HOME || path.join(homedir(), '.local', 'share');
  return path.join(base, 'platform', 'dev');
}

export async function startLocalService(options: {
  dataDir: string;
  port: number;
  log: (line: string) => void;
}): Promise<LocalService> {
  // the server's modules load only for this command
  const [{ loadConfig }, { createLogger }, { boot }, { startService }, users, plans] =
    await Promise.all([
      import('../../config.ts'),
      import('../../logger.ts'),
      import('../../boot.ts'),
      import('../../service.ts'),
      import('../../users/service.ts'),
      import('../../plans/operator.ts'),
    ]);
  const [{ hashApiKey }, { findActiveKeyByHash }] = await Promise.all([
    import('../../api-keys/keys.ts'),
    import('../../api-keys/queries.ts'),
  ]);
  await mkdir(options.dataDir, { recursive: true });
  const port = options.port && (await portIsFree(options.port)) ? options.port : await freePort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PLATFORM_DATA_DIR: options.dataDir,
    PLATFORM_PG_PORT: String(await freePort()),
    PLATFORM_LOG_LEVEL: process.env.PLATFORM_LOG_LEVEL ?? 'warn',
    PLATFORM_SANDBOX_WORKERS: '1',
    PLATFORM_WORKER_CONCURRENCY: '2',
    // open pages reload on each new release; a thrown error shows its stack in the browser
    PLATFORM_DEV_MODE: '1',
    // outbound fetches from app code go where the developer's machine can go (the API is still refused)
    ...(process.env.PLATFORM_FETCH_ALLOW
      ? { PLATFORM_FETCH_ALLOW: process.env.PLATFORM_FETCH_ALLOW }
      : {}),
  });
  const log = createLogger(config.logLevel);
  options.log(
    `starting a local platform (embedded Postgres in ${path.join(options.dataDir, 'postgres')})`,
  );
  const booted = await boot(config, { log });
  const service = await startService(config, log, booted);
  try {
    const { deps } = booted;
    // one development user and account, on the plan without limits, and a key kept in the data dir
    const keyFile = path.join(options.dataDir, KEY_FILE);
    let saved: { api_key?: string; account_id?: string } = {};
    try {
      saved = JSON.parse(await readFile(keyFile, 'utf8'));
    } catch {
      // first run
    }
    const user = await users.findUserByEmail(deps.db, DEV_EMAIL);
    let accountId = user?.default_account_id ?? undefined;
    let apiKey = saved.account_id === accountId ? saved.api_key : undefined;
    if (!user) {
      const created = await users.createUser(deps.db, { email: DEV_EMAIL, username: 'dev' });
      accountId = created.account_id;
      apiKey = created.api_key;
      await plans.setPlan(deps, { accountId, planKey: 'internal', force: true });
    } else if (apiKey) {
      // a revoked key, or a database made afresh: issue another
      if (!(await findActiveKeyByHash(deps.db, hashApiKey(apiKey)))) apiKey = undefined;
    }
    if (!apiKey)
      apiKey = (
        await users.addMember(deps.db, { accountId: accountId!, email: DEV_EMAIL, role: 'owner' })
      ).api_key;
    await writeFile(
      keyFile,
      JSON.stringify({ api_key: apiKey, account_id: accountId }, null, 2) + '\n',
      { mode: 0o600 },
    );
    const apiUrl = `http://127.0.0.1:${service.port}`;
    // where other commands (`platform jobs run --dev`) find this running service
    const running = path.join(options.dataDir, RUNNING_FILE);
    await writeFile(running, JSON.stringify({ api_url: apiUrl, pid: process.pid }) + '\n');
    return {
      apiUrl,
      apiKey: apiKey!,
      accountId: accountId!,
      appsUrl: (appId) => `${config.publicScheme}://${appId}.${config.hosts.apps}:${service.port}`,
      dataDir: options.dataDir,
      stop: async () => {
        await rm(running, { force: true });
        await service.stop();
      },
    };
  } catch (err) {
    await service.stop();
    throw err;
  }
}

/** The running `platform dev` service of a data directory and its key, for other commands; undefined when none runs. */
export async function runningLocalService(
  dataDir: string,
): Promise<{ apiUrl: string; apiKey: string } | undefined> {
  try {
    const running = JSON.parse(await readFile(path.join(dataDir, RUNNING_FILE), 'utf8')) as {
      api_url: string;
      pid: number;
    };
    process.kill(running.pid, 0); // throws when that process is gone
    const key = JSON.parse(await readFile(path.join(dataDir, KEY_FILE), 'utf8')) as {
      api_key: string;
    };
    return { apiUrl: running.api_url, apiKey: key.api_key };
  } catch {
    return undefined;
  }
}
