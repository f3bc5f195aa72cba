/**
 * One typed client for the control plane (`/v0/*` and the service routes), for the CLI, the test
 * harness and any other TypeScript caller. Its routes and their types are `routes.ts`.
 */
import type { ErrorBody } from '../errors.ts';
import type { ResponseOf, Route, V0Routes } from './routes.ts';

export { V0_ROUTES, type ResponseOf, type Route, type V0Routes } from './routes.ts';

/** The `{name}` parts of a route template. */
type ParamNames<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? P | ParamNames<Rest>
  : never;
type Params<K extends Route> = [ParamNames<K>] extends [never]
  ? { params?: undefined }
  : { params: Record<ParamNames<K>, string> };
type BodyOption<K extends Route> = [V0Routes[K]['body']] extends [never]
  ? { body?: undefined }
  : { body?: V0Routes[K]['body'] };
type QueryOption<K extends Route> = [V0Routes[K]['query']] extends [never]
  ? { query?: undefined }
  : { query?: V0Routes[K]['query'] };

/** What a call takes: path values, query and body as the route types them; `bodyStream` sends bytes as they come. */
export type CallOptions<K extends Route> = Params<K> &
  BodyOption<K> &
  QueryOption<K> & {
    bodyStream?: ReadableStream<Uint8Array>;
    /** extra headers (they win over the client's own) */
    headers?: Record<string, string>;
    /** leave the client's API key and account out of this call */
    noAuth?: boolean;
  };

export type ErrorDetail = ErrorBody['error'];
/** An answer: `body` is the documented success body when `ok`, else `error` is the contract's error. */
export type Answer<K extends Route> = { status: number; headers: Headers; text: string } & (
  | { ok: true; body: ResponseOf<K>; error?: undefined }
  | { ok: false; body?: undefined; error: ErrorDetail }
);

/** A refused call, thrown by `request()`. */
export class V0Error extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: Record<string, unknown>;
  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.name = 'V0Error';
  }
}

/** "GET /v0/apps/{app_id}" with params and query → method and the path to request. */
export function routePath(
  route: string,
  options: { params?: Record<string, string>; query?: object } = {},
): { method: string; path: string } {
  const [method, template] = route.split(' ') as [string, string];
  const path = template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = options.params?.[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${route}`);
    return encodeURIComponent(value);
  });
  const q = new URLSearchParams();
  for (const [k, val] of Object.entries(options.query ?? {}))
    if (val !== undefined) q.set(k, String(val));
  return { method, path: q.size ? `${path}?${q}` : path };
}

export type ClientOptions = {
  baseUrl: string;
  apiKey?: string | null;
  /** `X-Platform-Account-Id` for account-scoped routes */
  accountId?: string | null;
  /** the fetch to use (a test harness passes its in-process server's) */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
};

export type V0Client = {
  baseUrl: string;
  /** Calls a route and returns its answer, success or error, typed. Network failures throw. */
  call<K extends Route>(
    route: K,
    ...options: [ParamNames<K>] extends [never] ? [CallOptions<K>?] : [CallOptions<K>]
  ): Promise<Answer<K>>;
  /** Calls a route and returns its success body; an error answer throws a `V0Error`. */
  request<K extends Route>(
    route: K,
    ...options: [ParamNames<K>] extends [never] ? [CallOptions<K>?] : [CallOptions<K>]
  ): Promise<ResponseOf<K>>;
};

export function createV0Client(client: ClientOptions): V0Client {
  const doFetch = client.fetch ?? ((url: string, init: RequestInit) => fetch(url, init));
  async function call<K extends Route>(
    route: K,
    options: CallOptions<K> = {} as CallOptions<K>,
  ): Promise<Answer<K>> {
    const { method, path } = routePath(
      route,
      options as { params?: Record<string, string>; query?: object },
    );
    const headers: Record<string, string> = {};
    if (client.apiKey && !options.noAuth) headers.authorization = `Bearer ${client.apiKey}`;
    if (client.accountId && !options.noAuth) headers['x-platform-account-id'] = client.accountId;
    let body: BodyInit | undefined;
    if (options.bodyStream) body = options.bodyStream;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, options.headers);
    const res = await doFetch(client.baseUrl + path, {
      method,
      headers,
      body,
      ...(options.bodyStream ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const base = { status: res.status, headers: res.headers, text };
    if (res.ok) return { ...base, ok: true, body: json as ResponseOf<K> };
    const error = (json as Partial<ErrorBody> | undefined)?.error ?? {
      code: `http_${res.status}`,
      message: `HTTP ${res.status}`,
    };
    return { ...base, ok: false, error };
  }
  return {
    baseUrl: client.baseUrl,
    call: call as V0Client['call'],
    request: (async (route: Route, options?: CallOptions<Route>) => {
      const a = await call(route, options);
      if (!a.ok) throw new V0Error(a.status, a.error.code, a.error.message, a.error.details);
      return a.body;
    }) as V0Client['request'],
  };
}
