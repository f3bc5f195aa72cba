/**
 * Building the service's dependencies from a Config: the database (embedded unless
 * DATABASE_URL), migrations, the pool, the secrets key. Shared by `npm start`, the admin
 * command, scripts and the test harness.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Logger as WorkerLogger, runMigrations } from 'graphile-worker';
import type { Config } from './config.ts';
import { createDb, createPool } from './db/database.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import type { Deps } from './deps.ts';
import { verifySecretsKey } from './secrets/key-check.ts';
import { createLogger, type Logger } from './logger.ts';
import { createSignals } from './signals.ts';

/** Applies our migrations and graphile-worker's own schema. */
export async function prepareDatabase(connectionString: string): Promise<string[]> {
  const applied = await migrate(connectionString);
  await runMigrations({ connectionString, logger: workerLogger() });
  return applied;
}

/**
 * graphile-worker's logger routed to ours, keeping only warnings and errors. Its metadata carries
 * whole job rows, whose payloads hold sign-in links, recipients and whatever app code enqueued:
 * only a job's id, task and attempt pass, and the message (whose error text the tasks redact).
 */
export function workerLogger(log?: Logger): WorkerLogger {
  return new WorkerLogger(() => (level, message, meta) => {
    if (level === 'error') log?.error(`worker: ${message}`, jobFields(meta));
    else if (level === 'warning') log?.warn(`worker: ${message}`, jobFields(meta));
  });
}

function jobFields(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const job = meta?.job as
    | { id?: unknown; task_identifier?: unknown; attempts?: unknown; max_attempts?: unknown }
    | undefined;
  if (!job || typeof job !== 'object') return {};
  return {
    job: {
      id: job.id,
      task: job.task_identifier,
      attempt: job.attempts,
      max_attempts: job.max_attempts,
    },
  };
}

function decodeKey(text: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64url');
  if (key.length !== 32) throw new Error('PLATFORM_SECRETS_KEY must decode to 32 bytes');
  return key;
}

/** PLATFORM_SECRETS_KEY, or a key generated once into `<dataDir>/secrets.key` and reused. */
export async function loadSecretsKey(config: Config, log: Logger): Promise<Buffer> {
  if (config.secretsKey) return decodeKey(config.secretsKey);
  const file = path.resolve(config.dataDir, 'secrets.key');
  try {
    return decodeKey(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  await writeFile(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' }).catch(
    async (err) => {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
      throw err;
    },
  );
  log.info('generated a secrets key', { file });
  return decodeKey(await readFile(file, 'utf8'));
}

export type Booted = {
  deps: Deps;
  databaseUrl: string;
  embedded: EmbeddedPostgres | undefined;
  close(): Promise<void>;
};

/** Connects (starting the embedded cluster if needed), migrates and builds Deps. */
/**
 * `checkSecretsKey: false` is for commands that never decrypt app secrets (the admin command), so an
 * operator's tool is not refused over a key it does not use.
 */
export async function boot(
  config: Config,
  options: {
    log?: Logger;
    takeOverEmbedded?: boolean;
    poolSize?: number;
    checkSecretsKey?: boolean;
    /** false: leave the schema as it is (a restore migrates step by step itself) */
    migrate?: boolean;
  } = {},
): Promise<Booted> {
  const log = options.log ?? createLogger(config.logLevel);
  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      port: config.pgPort,
      log: (line) => log.info(line),
      takeOver: options.takeOverEmbedded ?? true,
    });
    databaseUrl = embedded.url('postgres');
  }
  try {
    const applied = options.migrate === false ? [] : await prepareDatabase(databaseUrl);
    if (applied.length) log.info('applied migrations', { migrations: applied });
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  const pool = createPool(databaseUrl, options.poolSize ?? 20);
  const db = createDb(pool);
  const secretsKey = await loadSecretsKey(config, log);
  try {
    if (options.checkSecretsKey !== false) await verifySecretsKey(db, secretsKey);
  } catch (err) {
    await db.destroy().catch(() => {});
    if (embedded?.owned) await embedded.stop();
    throw err;
  }
  const deps: Deps = { config, pool, db, log, secretsKey, signals: createSignals() };
  return {
    deps,
    databaseUrl,
    embedded,
    async close() {
      await db.destroy().catch(() => {});
      if (embedded?.owned) await embedded.stop();
    },
  };
}
