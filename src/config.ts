import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import * as v from 'valibot';
import {
  BUILT_IN_PLANS,
  markSold,
  mergePlans,
  PLAN_KEYS,
  type PlanCatalogue,
  type PlanKey,
} from './plans/catalogue.ts';

/** Every environment variable the service reads, with its default. README's table mirrors this. */
const port = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.regex(/^\d{1,5}$/, 'must be a port number'),
    v.transform(Number),
    v.integer(),
    v.minValue(1, 'must be a port number'),
    v.maxValue(65535, 'must be a port number'),
  );
const hostname = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.transform((s) => s.trim().toLowerCase()),
    v.regex(
      /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
      'must be a host name',
    ),
  );
const positiveInt = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(1),
  );

/** minute hour day-of-month month day-of-week, as graphile-worker's crontab reads them (numbers, *, lists, ranges, steps) */
function validCrontabTime(text: string): boolean {
  const fields = text.split(/\s+/);
  const ranges = [
    [0, 59],
    [0, 23],
    [1, 31],
    [1, 12],
    [0, 6],
  ] as const;
  if (fields.length !== 5) return false;
  return fields.every((field, i) => {
    const [lo, hi] = ranges[i]!;
    return field.split(',').every((part) => {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
      if (!m) return false;
      const nums = [m[2], m[3]].filter((x) => x !== undefined).map(Number);
      if (m[4] !== undefined && Number(m[4]) < 1) return false;
      return nums.every((n) => n >= lo && n <= hi);
    });
  });
}

const EnvSchema = v.object({
  PORT: port('8787'),
  HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
  DATABASE_URL: v.optional(
    v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')),
  ),
  PLATFORM_DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1)), './.data'),
  PLATFORM_PG_PORT: port('54329'),
  PLATFORM_ROLE: v.optional(
    v.picklist(['all', 'api', 'worker'], 'must be all, api or worker'),
    'all',
  ),
  PLATFORM_EXIT_WITH_PARENT: v.optional(v.picklist(['0', '1'], 'must be 0 or 1'), '0'),
  PLATFORM_DEV_MODE: v.optional(v.picklist(['0', '1'], 'must be 0 or 1'), '0'),
  PLATFORM_API_HOST: hostname('api.localhost'),
  PLATFORM_CONSOLE_HOST: hostname('console.localhost'),
  PLATFORM_APPS_HOST: hostname('apps.localhost'),
  PLATFORM_DOCS_HOST: hostname('docs.localhost'),
  PLATFORM_PUBLIC_SCHEME: v.optional(
    v.picklist(['http', 'https'], 'must be http or https'),
    'http',
  ),
  PLATFORM_PUBLIC_PORT: v.optional(
    v.pipe(v.string(), v.regex(/^\d{0,5}$/, 'must be a port number or empty')),
  ),
  PLATFORM_SECRETS_KEY: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/,
        'must be 32 bytes as 64 hex characters or base64',
      ),
    ),
  ),
  PLATFORM_WORKER_CONCURRENCY: positiveInt('4'),
  PLATFORM_WORKER_STALE_SECONDS: positiveInt('30'),
  PLATFORM_SANDBOX_WORKERS: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(64),
    ),
  ),
  PLATFORM_PLANS_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
  PLATFORM_USAGE_FLUSH_MS: v.pipe(
    v.optional(v.string(), '5000'),
    v.regex(/^\d+$/, 'must be a whole number of milliseconds'),
    v.transform(Number),
    v.minValue(50),
    v.maxValue(60_000),
  ),
  PLATFORM_ANALYTICS_FLUSH_MS: v.pipe(
    v.optional(v.string(), '10000'),
    v.regex(/^\d+$/, 'must be a whole number of milliseconds'),
    v.transform(Number),
    v.minValue(50),
    v.maxValue(300_000),
  ),
  PLATFORM_SANDBOX_MEMORY_MB: positiveInt('64'),
  PLATFORM_SANDBOX_WALL_MS: positiveInt('10000'),
  PLATFORM_SANDBOX_BACKGROUND_WALL_MS: positiveInt('60000'),
  PLATFORM_FETCH_ALLOW: v.optional(v.string(), ''),
  PLATFORM_DEFAULT_PLAN: v.optional(
    v.picklist(PLAN_KEYS, `must be one of ${PLAN_KEYS.join(', ')}`),
  ),
  /** when backups run by themselves: a crontab schedule (minute hour day month weekday), e.g. "0 3 * * *" */
  PLATFORM_BACKUP_SCHEDULE: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check(
        validCrontabTime,
        'must be five crontab fields within their ranges, e.g. "0 3 * * *" (03:00 UTC daily)',
      ),
    ),
  ),
  /** where backups go: a folder, or "s3" (the PLATFORM_S3_* bucket, under <prefix>backups/) */
  PLATFORM_BACKUP_TO: v.optional(v.pipe(v.string(), v.minLength(1))),
  PLATFORM_BACKUP_KEEP: positiveInt('7'),
  /** A request header a trusted proxy in front sets to the visitor's country (e.g. cf-ipcountry): request.cf.country. */
  PLATFORM_COUNTRY_HEADER: v.optional(
    v.pipe(
      v.string(),
      v.toLowerCase(),
      v.regex(/^[a-z0-9-]{1,64}$/, 'must be a header name such as cf-ipcountry'),
    ),
  ),
  PLATFORM_SANDBOX_WORKER_MEMORY_MB: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(32),
      v.maxValue(2048),
    ),
  ),
  PLATFORM_SANDBOX_INSTANCE_BUDGET_MB: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(2048),
    ),
  ),
  PLATFORM_HEADERS_TIMEOUT_SECONDS: positiveInt('20'),
  PLATFORM_REQUEST_TIMEOUT_SECONDS: positiveInt('120'),
  PLATFORM_STATIC_CACHE_MB: v.pipe(
    v.optional(v.string(), '64'),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
  ),
  PLATFORM_HTTP_CACHE_MB: v.pipe(
    v.optional(v.string(), '64'),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
  ),
  PLATFORM_HTTP_CACHE_APP_MB: v.pipe(
    v.optional(v.string(), '8'),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
  ),
  SMTP_URL: v.optional(
    v.pipe(v.string(), v.regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')),
  ),
  PLATFORM_MAIL_FROM: v.optional(v.pipe(v.string(), v.minLength(3)), 'platform@localhost'),
  /** a bearer token Prometheus scrapes `/metrics` with (operators' API keys work too) */
  PLATFORM_METRICS_TOKEN: v.optional(
    v.pipe(
      v.string(),
      v.minLength(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)'),
    ),
  ),
  STRIPE_SECRET_KEY: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/,
        'must be a Stripe secret key (sk_test_..., sk_live_... or a restricted rk_ key)',
      ),
    ),
  ),
  STRIPE_WEBHOOK_SECRET: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^whsec_[A-Za-z0-9+/=]+$/, 'must be a Stripe webhook signing secret (whsec_...)'),
    ),
  ),
  STRIPE_PRICE_STARTER: v.optional(
    v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9]+$/, 'must be a Stripe price id (price_...)')),
  ),
  STRIPE_PRICE_BUSINESS: v.optional(
    v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9]+$/, 'must be a Stripe price id (price_...)')),
  ),
  STRIPE_PRICE_BUSINESS_PLUS: v.optional(
    v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9]+$/, 'must be a Stripe price id (price_...)')),
  ),
  STRIPE_PRICE_AGENCY: v.optional(
    v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9]+$/, 'must be a Stripe price id (price_...)')),
  ),
  STRIPE_API_BASE: v.optional(
    v.pipe(
      v.string(),
      v.url('must be a URL such as http://127.0.0.1:12111'),
      v.regex(/^https?:\/\/[^/?#]+\/?$/, 'must be a scheme, host and port only'),
    ),
  ),
  PLATFORM_BILLING_GRACE_DAYS: v.pipe(
    v.optional(v.string(), '14'),
    v.regex(/^\d+$/, 'must be a whole number of days'),
    v.transform(Number),
    v.minValue(1),
    v.maxValue(90),
  ),
  PLATFORM_CNAME_TARGET: v.optional(hostname('')),
  PLATFORM_APEX_ADDRESSES: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => list(s).every((a) => isIP(a) !== 0),
        'must be IP addresses separated by commas',
      ),
    ),
  ),
  PLATFORM_DNS_SERVERS: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => list(s).every(dnsServer),
        'must be DNS servers (IP or IP:port, [IPv6]:port) separated by commas',
      ),
    ),
  ),
  PLATFORM_CAA_ISSUERS: v.optional(v.string(), 'letsencrypt.org,zerossl.com,pki.goog,ssl.com'),
  PLATFORM_TLS_ASK_TOKEN: v.optional(
    v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters')),
  ),
  CLOUDFLARE_API_TOKEN: v.optional(
    v.pipe(v.string(), v.minLength(10, 'must be a Cloudflare API token')),
  ),
  CLOUDFLARE_ZONE_ID: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[0-9a-f]{32}$/, 'must be a Cloudflare zone id (32 hex characters)'),
    ),
  ),
  CLOUDFLARE_API_BASE: v.optional(
    v.pipe(v.string(), v.url('must be a URL such as https://api.cloudflare.com/client/v4')),
    'https://api.cloudflare.com/client/v4',
  ),
  PLATFORM_BLOB_STORE: v.optional(
    v.picklist(['postgres', 's3'], 'must be postgres or s3'),
    'postgres',
  ),
  PLATFORM_S3_ENDPOINT: v.optional(
    v.pipe(v.string(), v.url('must be a URL such as https://s3.eu-central-1.amazonaws.com')),
  ),
  PLATFORM_S3_BUCKET: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name')),
  ),
  PLATFORM_S3_REGION: v.optional(v.pipe(v.string(), v.minLength(1)), 'us-east-1'),
  PLATFORM_S3_ACCESS_KEY_ID: v.optional(v.string()),
  PLATFORM_S3_SECRET_ACCESS_KEY: v.optional(v.string()),
  PLATFORM_S3_FORCE_PATH_STYLE: v.optional(
    v.picklist(['true', 'false', '1', '0', ''], 'must be true or false'),
    'false',
  ),
  PLATFORM_S3_PREFIX: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^([A-Za-z0-9._-]+\/)*$/, 'must be empty or end in /, e.g. platform/'),
    ),
    '',
  ),
  PLATFORM_LOG_LEVEL: v.optional(
    v.picklist(
      ['debug', 'info', 'warn', 'error', 'silent'],
      'must be debug, info, warn, error or silent',
    ),
    'info',
  ),
});

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
   * The shared cache of app answers marked cacheable (src/origin/http-cache.ts): bytes in all, and
   * the most one app may hold (PLATFORM_HTTP_CACHE_MB, PLATFORM_HTTP_CACHE_APP_MB; 0 turns it off).
   */
  httpCache: Readonly<{ bytes: number; appBytes: number }>;
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

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
/** `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:53` */
function dnsServer(s: string): boolean {
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(s);
  if (m) return isIP(m[1]!) !== 0;
  return isIP(s) === 6;
}

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
