/**
 * Every environment variable the service reads, with its default and what a value must be: the
 * schema `loadConfig` (config.ts) parses the environment with. README's table mirrors it.
 */
import { isIP } from 'node:net';
import * as v from 'valibot';
import { PLAN_KEYS } from './plans/catalogue.ts';

/** A comma-separated variable's items, trimmed, empty ones dropped. */
export const list = (s: string | undefined) =>
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

export const EnvSchema = v.object({
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
  /** which QuickJS build runs app code: the platform's own (default) or the stock variant */
  PLATFORM_ENGINE: v.optional(v.picklist(['own', 'stock'], 'must be own or stock')),
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
  PLATFORM_HTTP_CACHE_ACCOUNT_MB: v.pipe(
    v.optional(v.string(), '16'),
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
