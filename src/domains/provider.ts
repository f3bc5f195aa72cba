/**
 * Cloudflare for SaaS custom hostnames, when `CLOUDFLARE_API_TOKEN` and `CLOUDFLARE_ZONE_ID` are
 * set: the four calls of the v4 API this platform needs (create with `ssl.method: txt`, read, find
 * by name, delete), over fetch with a bearer token and `CLOUDFLARE_API_BASE` (tests point it at a
 * loopback fake). The official SDK (`cloudflare`, 120 MB installed) is not worth four calls
 * (docs/decisions/domains.md). Every failure or timeout is 502 `custom_hostname_provider_failed`; a
 * hostname that exists there already and is not ours is 409 `custom_hostname_provider_conflict`.
 */
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { ProviderRecord } from './schemas.ts';

const TIMEOUT_MS = 10_000;
/** Cloudflare's error code for "Duplicate custom hostname found." */
const DUPLICATE = 1406;

type CfHostname = {
  id: string;
  hostname: string;
  status?: string;
  ssl?: {
    status?: string;
    validation_records?: {
      txt_name?: string;
      txt_value?: string;
      http_url?: string;
      http_body?: string;
    }[];
    validation_errors?: { message?: string }[];
  };
  ownership_verification?: { type?: string; name?: string; value?: string };
  verification_errors?: string[];
};
type Envelope<T> = {
  success?: boolean;
  errors?: { code?: number; message?: string }[];
  result?: T;
};

export type Provider = {
  create(hostname: string): Promise<ProviderRecord>;
  read(id: string): Promise<ProviderRecord>;
  remove(id: string): Promise<void>;
};

/** The route record's `provider` member from Cloudflare's answer. */
export function providerRecord(h: CfHostname): ProviderRecord {
  const validation: ProviderRecord['validation_records'] = [];
  if (h.ownership_verification?.name && h.ownership_verification.value)
    validation.push({
      type: (h.ownership_verification.type ?? 'txt').toUpperCase(),
      name: h.ownership_verification.name,
      value: h.ownership_verification.value,
    });
  for (const r of h.ssl?.validation_records ?? [])
    if (r.txt_name && r.txt_value)
      validation.push({ type: 'TXT', name: r.txt_name, value: r.txt_value });
  return {
    name: 'cloudflare',
    id: h.id,
    status: h.status ?? 'pending',
    ssl_status: h.ssl?.status ?? null,
    validation_records: validation,
    verification_errors: [
      ...(h.verification_errors ?? []),
      ...(h.ssl?.validation_errors ?? []).map((e) => e.message ?? '').filter(Boolean),
    ],
  };
}

export function providerOf(config: Config, fetchImpl: typeof fetch = fetch): Provider | undefined {
  const cf = config.domains.cloudflare;
  if (!cf) return undefined;
  const base = `${cf.apiBase}/zones/${cf.zoneId}/custom_hostnames`;

  async function call<T>(
    method: string,
    url: string,
    body?: unknown,
  ): Promise<{ status: number; env: Envelope<T> }> {
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method,
        headers: {
          authorization: `Bearer ${cf!.apiToken}`,
          'content-type': 'application/json',
          // A connection of its own each call: Deno's fetch sends a request again, unasked, when the
          // pooled connection it went out on closes before an answer; a create sent twice is two.
          connection: 'close',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      const why =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${TIMEOUT_MS / 1000} s`
          : (err as Error).message;
      throw new ApiError(
        'custom_hostname_provider_failed',
        `Cloudflare could not be reached (${why}); nothing was changed. Try again.`,
        { provider: 'cloudflare' },
      );
    }
    let env: Envelope<T> = {};
    try {
      env = (await res.json()) as Envelope<T>;
    } catch {
      // not JSON: judged by status below
    }
    return { status: res.status, env };
  }

  function failure(status: number, env: Envelope<unknown>): ApiError {
    const messages = (env.errors ?? [])
      .map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim())
      .filter(Boolean);
    return new ApiError(
      'custom_hostname_provider_failed',
      `Cloudflare refused the request (HTTP ${status}${messages.length ? `: ${messages.join('; ')}` : ''}); nothing was changed.`,
      { provider: 'cloudflare', provider_status: status, provider_errors: messages },
    );
  }

  return {
    async create(hostname) {
      const { status, env } = await call<CfHostname>('POST', base, {
        hostname,
        ssl: { method: 'txt', type: 'dv', settings: { min_tls_version: '1.2' } },
      });
      if (status < 300 && env.success !== false && env.result?.id)
        return providerRecord(env.result);
      if (status === 409 || (env.errors ?? []).some((e) => e.code === DUPLICATE)) {
        throw new ApiError(
          'custom_hostname_provider_conflict',
          `${hostname} already exists at Cloudflare and is not this route's: remove it there (or from the app that holds it) and try again.`,
          { provider: 'cloudflare', hostname },
        );
      }
      throw failure(status, env);
    },
    async read(id) {
      const { status, env } = await call<CfHostname>('GET', `${base}/${encodeURIComponent(id)}`);
      if (status < 300 && env.result?.id) return providerRecord(env.result);
      throw failure(status, env);
    },
    async remove(id) {
      const { status, env } = await call<{ id: string }>(
        'DELETE',
        `${base}/${encodeURIComponent(id)}`,
      );
      if (status < 300 || status === 404) return; // gone already is gone
      throw failure(status, env);
    },
  };
}
