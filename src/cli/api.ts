/**
 * The CLI's typed client for `/v0/*`. `Routes` says what each route answers, with types inferred
 * from the valibot schemas that also produce /openapi.json, so a changed record breaks the CLI's
 * build instead of its output. Contract errors become CliErrors with their code; network failures
 * get a hint.
 */
import type { AccountList } from '../accounts/schemas.ts';
import type { AppList, AppSummary, PublishAppResponse, ReleaseList, RollbackResponse, UnpublishResponse } from '../apps/schemas.ts';
import type { ApiKeyList, RevokedApiKey } from '../api-keys/schemas.ts';
import type { DevicePoll, DeviceStart } from '../device-auth/schemas.ts';
import type { EventPage } from '../events/schemas.ts';
import type { SecretDeleted, SecretList, SecretSummary } from '../secrets/schemas.ts';
import { resolveTarget } from './credentials.ts';
import { CliError } from './output.ts';

/** The routes the CLI calls, as "METHOD /path/{param}" (the document's spelling), and what each answers. */
export type Routes = {
  'GET /v0/accounts': AccountList;
  'GET /v0/apps': AppList;
  'PUT /v0/apps': PublishAppResponse;
  'GET /v0/apps/{app_id}': AppSummary;
  'PUT /v0/apps/{app_id}': PublishAppResponse;
  'DELETE /v0/apps/{app_id}': UnpublishResponse;
  'GET /v0/apps/{app_id}/releases': ReleaseList;
  'POST /v0/apps/{app_id}/rollback': RollbackResponse;
  'GET /v0/apps/{app_id}/events': EventPage;
  'GET /v0/apps/{app_id}/secrets': SecretList;
  'PUT /v0/apps/{app_id}/secrets/{name}': SecretSummary;
  'DELETE /v0/apps/{app_id}/secrets/{name}': SecretDeleted;
  'POST /v0/auth/device/start': DeviceStart;
  'POST /v0/auth/device/poll': DevicePoll;
  'GET /v0/auth/api-keys': ApiKeyList;
  'DELETE /v0/auth/api-keys/{api_key_id}': RevokedApiKey;
};
/** The same list at run time; the contract test checks each is a documented operation. */
export const CLI_ROUTES = Object.keys({
  'GET /v0/accounts': 1,
  'GET /v0/apps': 1,
  'PUT /v0/apps': 1,
  'GET /v0/apps/{app_id}': 1,
  'PUT /v0/apps/{app_id}': 1,
  'DELETE /v0/apps/{app_id}': 1,
  'GET /v0/apps/{app_id}/releases': 1,
  'POST /v0/apps/{app_id}/rollback': 1,
  'GET /v0/apps/{app_id}/events': 1,
  'GET /v0/apps/{app_id}/secrets': 1,
  'PUT /v0/apps/{app_id}/secrets/{name}': 1,
  'DELETE /v0/apps/{app_id}/secrets/{name}': 1,
  'POST /v0/auth/device/start': 1,
  'POST /v0/auth/device/poll': 1,
  'GET /v0/auth/api-keys': 1,
  'DELETE /v0/auth/api-keys/{api_key_id}': 1,
} satisfies Record<keyof Routes, 1>) as (keyof Routes)[];

export type RequestOptions = {
  /** values for the `{name}` parts of the path (URL-encoded here) */
  params?: Record<string, string>;
  /** query parameters; undefined ones are left out */
  query?: Record<string, string | undefined>;
  body?: unknown;
  bodyStream?: ReadableStream<Uint8Array>;
  noAuth?: boolean;
};

export type Api = { url: string; request<K extends keyof Routes>(route: K, options?: RequestOptions): Promise<Routes[K]> };

/** "GET /v0/apps/{app_id}" with params → method and the path to request. */
export function routePath(route: string, options: RequestOptions = {}): { method: string; path: string } {
  const [method, template] = route.split(' ') as [string, string];
  const path = template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = options.params?.[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${route}`);
    return encodeURIComponent(value);
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) q.set(k, v);
  return { method, path: q.size ? `${path}?${q}` : path };
}

export async function createApi(options: { requireKey?: boolean } = {}): Promise<Api> {
  const target = await resolveTarget();
  if (options.requireKey !== false && !target.apiKey) {
    throw new CliError('Not logged in.', 'no_api_key', undefined, 'Run `platform login` (it opens the console to approve this device), or set PLATFORM_API_KEY.');
  }
  return {
    url: target.apiUrl,
    async request(route, init = {}) {
      const { method, path } = routePath(route, init);
      const headers: Record<string, string> = {};
      if (target.apiKey && !init.noAuth) headers.authorization = `Bearer ${target.apiKey}`;
      // the account chosen when this device was approved (or PLATFORM_ACCOUNT_ID) for account-scoped routes
      if (target.accountId && !init.noAuth) headers['x-platform-account-id'] = target.accountId;
      let payload: BodyInit | undefined;
      if (init.bodyStream) {
        payload = init.bodyStream;
        headers['content-type'] = 'application/json';
      } else if (init.body !== undefined) {
        payload = JSON.stringify(init.body);
        headers['content-type'] = 'application/json';
      }
      let res: Response;
      try {
        res = await fetch(target.apiUrl + path, { method, headers, body: payload, ...(init.bodyStream ? { duplex: 'half' } : {}) } as RequestInit);
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        throw new CliError(`Cannot reach the platform at ${target.apiUrl}${cause ? ` (${cause})` : ''}.`, 'unreachable', undefined, 'Is it running? Start it with `npm start`, or point PLATFORM_API_URL at your server.');
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (!res.ok) {
        const e = (json as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)?.error;
        const hint = res.status === 401 && !init.noAuth ? 'Your key was refused: run `platform login` again, or check PLATFORM_API_KEY.' : undefined;
        throw new CliError(e?.message ?? `HTTP ${res.status}`, e?.code ?? `http_${res.status}`, e?.details, hint);
      }
      // The server's answers are checked against the same schemas in the test suite.
      return json as never;
    },
  };
}
