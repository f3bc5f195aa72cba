import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import * as v from 'valibot';
import { EnvSchema, list } from './config-env.ts';
import type { EngineName } from './sandbox/engine-variant.ts';
import {
  BUILT_IN_PLANS,
  markSold,
  mergePlans,
  type PlanCatalogue,
  type PlanKey,
} from './plans/catalogue.ts';

export type Config = Readonly<{
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  pgPort: number;
  role: 'all' | 'api' | 'worker';
  /** Stop when the process that started this one is gone (`npm run cluster` sets it for its processes). */
  exitWithParent: boolean;
  /**
   * `platform dev`'s local service (PLATFORM_DEV_MODE=1): pages reload on a new release and a thrown
   * error answers a browser with its stack (src/origin/dev-mode.ts). Never for a served platform.
   */
  devMode: boolean;
  hosts: Readonly<{ api: string; console: string; apps: string; docs: string }>;
  publicScheme: 'http' | 'https';
  /** Port shown in public URLs; empty when it is the scheme's default. */
  publicPort: string;
  secretsKey: string | undefined;
  workerConcurrency: number;
  /** a job worker whose heartbeat is older than this is dead: its locked jobs are released */
  workerStaleSeconds: number;
  /** Plans with the operator's PLATFORM_PLANS_FILE merged over the built-in catalogue. */
  plans: PlanCatalogue;
  /** Whether this server sells plans (Stripe and at least one price configured): else plans come from the operator. */
  sellsPlans: boolean;
  /** Backups: where they go (a folder, or "s3"), how many are kept, and when they run by themselves. */
  backups: Readonly<{ to: string; keep: number; schedule: string | undefined }>;
  /** The bearer token that may scrape `/metrics` besides operators' API keys (PLATFORM_METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** The plan a new account starts on: PLATFORM_DEFAULT_PLAN, else `free` where plans are sold and `business` where none are. */
  defaultPlan: PlanKey;
  /** How often each node adds its counted requests to the shared monthly totals. */
  usageFlushMs: number;
  /** How often each node adds its analytics counts to the daily aggregates. */
  analyticsFlushMs: number;
  sandbox: Readonly<{
    workers: number;
    /** the QuickJS build (src/sandbox/engine.ts); undefined: own on Node, stock on Deno */
    engine: EngineName | undefined;
    memoryBytes: number;
    wallMs: number;
    backgroundWallMs: number;
    workerMemoryBytes: number | undefined;
    instanceBudgetBytes: number | undefined;
    fetchAllow: readonly string[];
    /** the header a trusted proxy sets to the visitor's country, read into request.cf.country */
    countryHeader: string | undefined;
  }>;
  staticCacheBytes: number;
  /**
   * The shared cache of app answers marked cacheable (src/runtime/http-cache.ts): bytes in all, and
   * the most one app and one account may hold (PLATFORM_HTTP_CACHE_MB, PLATFORM_HTTP_CACHE_APP_MB,
   * PLATFORM_HTTP_CACHE_ACCOUNT_MB; 0 turns it off).
   */
  httpCache: Readonly<{ bytes: number; appBytes: number; accountBytes: number }>;
  /** Time a client has to send its request headers, and the whole request (body included). */
  timeouts: Readonly<{ headersMs: number; requestMs: number }>;
  mail: Readonly<{ smtpUrl: string | undefined; from: string }>;
  /** Stripe: the secret key, webhook secret, one price per paid plan, another API host (tests, emulators), days of grace after a failed payment. */
  stripe: Readonly<{
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    prices: Readonly<
      Record<'starter' | 'business' | 'business_plus' | 'agency', string | undefined>
    >;
    apiBase: string | undefined;
    graceDays: number;
  }>;
  /** Slugs and custom domains: the CNAME target customers point at, apex addresses, DNS servers for verification, CAs allowed by CAA, the TLS ask token, Cloudflare for SaaS. */
  domains: Readonly<{
    cnameTarget: string;
    apexAddresses: readonly string[];
    /** also asked for the names app code fetches (src/sandbox/outbound.ts) */
    dnsServers: readonly string[];
    caaIssuers: readonly string[];
    tlsAskToken: string | undefined;
    cloudflare: Readonly<{ apiToken: string; zoneId: string; apiBase: string }> | undefined;
  }>;
  /** Where release and app file bytes go: Postgres, or an S3-compatible bucket (docs/decisions/files.md "Blob storage"). */
  blobs: Readonly<{ store: 'postgres' | 's3'; s3: S3Config | undefined }>;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
}>;

export type S3Config = Readonly<{
  endpoint: string | undefined;
  bucket: string;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
  prefix: string;
}>;

export class ConfigError extends Error {}

/** Parses the environment once; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const picked: Record<string, string | undefined> = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  if (env.PLATFORM_PUBLIC_PORT === '') picked.PLATFORM_PUBLIC_PORT = '';
  if (env.PLATFORM_SANDBOX_CPU_MS) {
    throw new ConfigError(
      "Invalid configuration:\n  PLATFORM_SANDBOX_CPU_MS: no longer read; the CPU time of a call is the plan's server.cpu_ms.max (set it per plan in PLATFORM_PLANS_FILE)",
    );
  }
  const result = v.safeParse(EnvSchema, picked);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const name = issue.path?.map((p) => String(p.key)).join('.') ?? 'environment';
      return `${name}: ${issue.message} (got ${JSON.stringify(picked[name] ?? '')})`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.output;
  // plans are sold when Stripe can take a payment for at least one of them (billing/stripe.ts says which)
  const sellsPlans = Boolean(
    e.STRIPE_SECRET_KEY &&
      e.STRIPE_WEBHOOK_SECRET &&
      (e.STRIPE_PRICE_STARTER ||
        e.STRIPE_PRICE_BUSINESS ||
        e.STRIPE_PRICE_BUSINESS_PLUS ||
        e.STRIPE_PRICE_AGENCY),
  );
  if (Boolean(e.CLOUDFLARE_API_TOKEN) !== Boolean(e.CLOUDFLARE_ZONE_ID)) {
    throw new ConfigError(
      'Invalid configuration:\n  CLOUDFLARE_API_TOKEN and CLOUDFLARE_ZONE_ID: set both (custom hostnames through Cloudflare for SaaS) or neither',
    );
  }
  if (e.PLATFORM_BACKUP_TO === 's3' && !e.PLATFORM_S3_BUCKET) {
    throw new ConfigError(
      'Invalid configuration:\n  PLATFORM_S3_BUCKET: required when PLATFORM_BACKUP_TO is s3',
    );
  }
  if (e.PLATFORM_BLOB_STORE === 's3' && !e.PLATFORM_S3_BUCKET) {
    throw new ConfigError(
      'Invalid configuration:\n  PLATFORM_S3_BUCKET: required when PLATFORM_BLOB_STORE is s3',
    );
  }
  if (Boolean(e.PLATFORM_S3_ACCESS_KEY_ID) !== Boolean(e.PLATFORM_S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError(
      'Invalid configuration:\n  PLATFORM_S3_ACCESS_KEY_ID and PLATFORM_S3_SECRET_ACCESS_KEY: set both, or neither (the AWS SDK then finds credentials itself)',
    );
  }
  let publicPort = e.PLATFORM_PUBLIC_PORT ?? String(e.PORT);
  if (
    (e.PLATFORM_PUBLIC_SCHEME === 'http' && publicPort === '80') ||
    (e.PLATFORM_PUBLIC_SCHEME === 'https' && publicPort === '443')
  ) {
    publicPort = '';
  }
  return Object.freeze({
    plans: markSold(loadPlans(e.PLATFORM_PLANS_FILE), sellsPlans),
    sellsPlans,
    defaultPlan: e.PLATFORM_DEFAULT_PLAN ?? (sellsPlans ? 'free' : 'business'),
    usageFlushMs: e.PLATFORM_USAGE_FLUSH_MS,
    analyticsFlushMs: e.PLATFORM_ANALYTICS_FLUSH_MS,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.PLATFORM_DATA_DIR,
    pgPort: e.PLATFORM_PG_PORT,
    role: e.PLATFORM_ROLE,
    exitWithParent: e.PLATFORM_EXIT_WITH_PARENT === '1',
    devMode: e.PLATFORM_DEV_MODE === '1',
    hosts: Object.freeze({
      api: e.PLATFORM_API_HOST,
      console: e.PLATFORM_CONSOLE_HOST,
      apps: e.PLATFORM_APPS_HOST,
      docs: e.PLATFORM_DOCS_HOST,
    }),
    publicScheme: e.PLATFORM_PUBLIC_SCHEME,
    publicPort,
    secretsKey: e.PLATFORM_SECRETS_KEY,
    workerConcurrency: e.PLATFORM_WORKER_CONCURRENCY,
    workerStaleSeconds: e.PLATFORM_WORKER_STALE_SECONDS,
    sandbox: Object.freeze({
      workers: e.PLATFORM_SANDBOX_WORKERS ?? Math.max(1, Math.min(4, availableParallelism())),
      engine: e.PLATFORM_ENGINE,
      memoryBytes: e.PLATFORM_SANDBOX_MEMORY_MB * 1024 * 1024,
      wallMs: e.PLATFORM_SANDBOX_WALL_MS,
      backgroundWallMs: e.PLATFORM_SANDBOX_BACKGROUND_WALL_MS,
      fetchAllow: Object.freeze(
        e.PLATFORM_FETCH_ALLOW.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
      countryHeader: e.PLATFORM_COUNTRY_HEADER,
      workerMemoryBytes:
        e.PLATFORM_SANDBOX_WORKER_MEMORY_MB === undefined
          ? undefined
          : e.PLATFORM_SANDBOX_WORKER_MEMORY_MB * 1024 * 1024,
      instanceBudgetBytes:
        e.PLATFORM_SANDBOX_INSTANCE_BUDGET_MB === undefined
          ? undefined
          : e.PLATFORM_SANDBOX_INSTANCE_BUDGET_MB * 1024 * 1024,
    }),
    staticCacheBytes: e.PLATFORM_STATIC_CACHE_MB * 1024 * 1024,
    httpCache: Object.freeze({
      bytes: e.PLATFORM_HTTP_CACHE_MB * 1024 * 1024,
      appBytes: Math.min(e.PLATFORM_HTTP_CACHE_APP_MB, e.PLATFORM_HTTP_CACHE_MB) * 1024 * 1024,
      accountBytes:
        Math.min(
          Math.max(e.PLATFORM_HTTP_CACHE_ACCOUNT_MB, e.PLATFORM_HTTP_CACHE_APP_MB),
          e.PLATFORM_HTTP_CACHE_MB,
        ) *
        1024 *
        1024,
    }),
    timeouts: Object.freeze({
      headersMs: e.PLATFORM_HEADERS_TIMEOUT_SECONDS * 1000,
      requestMs: e.PLATFORM_REQUEST_TIMEOUT_SECONDS * 1000,
    }),
    mail: Object.freeze({ smtpUrl: e.SMTP_URL, from: e.PLATFORM_MAIL_FROM }),
    metricsToken: e.PLATFORM_METRICS_TOKEN,
    backups: Object.freeze({
      to: e.PLATFORM_BACKUP_TO ?? `${e.PLATFORM_DATA_DIR.replace(/\/+$/, '')}/backups`,
      keep: e.PLATFORM_BACKUP_KEEP,
      schedule: e.PLATFORM_BACKUP_SCHEDULE,
    }),
    stripe: Object.freeze({
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      prices: Object.freeze({
        starter: e.STRIPE_PRICE_STARTER,
        business: e.STRIPE_PRICE_BUSINESS,
        business_plus: e.STRIPE_PRICE_BUSINESS_PLUS,
        agency: e.STRIPE_PRICE_AGENCY,
      }),
      apiBase: e.STRIPE_API_BASE,
      graceDays: e.PLATFORM_BILLING_GRACE_DAYS,
    }),
    domains: Object.freeze({
      cnameTarget: e.PLATFORM_CNAME_TARGET || e.PLATFORM_APPS_HOST,
      apexAddresses: Object.freeze(list(e.PLATFORM_APEX_ADDRESSES)),
      dnsServers: Object.freeze(list(e.PLATFORM_DNS_SERVERS)),
      caaIssuers: Object.freeze(list(e.PLATFORM_CAA_ISSUERS).map((s) => s.toLowerCase())),
      tlsAskToken: e.PLATFORM_TLS_ASK_TOKEN,
      cloudflare:
        e.CLOUDFLARE_API_TOKEN && e.CLOUDFLARE_ZONE_ID
          ? Object.freeze({
              apiToken: e.CLOUDFLARE_API_TOKEN,
              zoneId: e.CLOUDFLARE_ZONE_ID,
              apiBase: e.CLOUDFLARE_API_BASE.replace(/\/$/, ''),
            })
          : undefined,
    }),
    blobs: Object.freeze({
      store: e.PLATFORM_BLOB_STORE,
      s3: e.PLATFORM_S3_BUCKET
        ? Object.freeze({
            endpoint: e.PLATFORM_S3_ENDPOINT,
            bucket: e.PLATFORM_S3_BUCKET,
            region: e.PLATFORM_S3_REGION,
            accessKeyId: e.PLATFORM_S3_ACCESS_KEY_ID || undefined,
            secretAccessKey: e.PLATFORM_S3_SECRET_ACCESS_KEY || undefined,
            forcePathStyle:
              e.PLATFORM_S3_FORCE_PATH_STYLE === 'true' || e.PLATFORM_S3_FORCE_PATH_STYLE === '1',
            prefix: e.PLATFORM_S3_PREFIX,
          })
        : undefined,
    }),
    logLevel: e.PLATFORM_LOG_LEVEL,
  });
}

/** The plan catalogue, with the operator's file merged in; a file that is missing or wrong stops start-up. */
function loadPlans(file: string | undefined): PlanCatalogue {
  if (!file) return BUILT_IN_PLANS;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration:\n  PLATFORM_PLANS_FILE: cannot read ${file} as JSON (${(err as Error).message})`,
    );
  }
  try {
    return mergePlans(json);
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration:\n  PLATFORM_PLANS_FILE (${file}): ${(err as Error).message}`,
    );
  }
}

/** The public URL of a host, e.g. `http://api.localhost:8787`. */
export function publicUrl(config: Config, host: string): string {
  return `${config.publicScheme}://${host}${config.publicPort ? `:${config.publicPort}` : ''}`;
}

/** For commands (`npm start`, `npm run migrate`): the configuration, or the message naming the bad variable and exit code 2. */
export function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(2);
    }
    throw err;
  }
}
