/**
 * Header hygiene at the sandbox boundary. Going in, app code never sees platform headers,
 * cookies, control-plane credentials or proxy internals; an app's own `Authorization` (Basic,
 * Bearer JWTs) and `X-API-Key` reach it, unless they carry a platform API key. Coming out, hop-by-hop headers are dropped and an
 * app cannot set cookies in the platform's reserved namespace.
 */
import type { HeaderReads } from '../http/parsed-headers.ts';
import { UNTYPED } from '../http/untyped.ts';

const DROP_IN = new Set([
  'cookie',
  'proxy-authorization',
  'forwarded',
  'x-real-ip',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-request-id',
]);
const DROP_OUT = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);
export const PLATFORM_COOKIE_PREFIXES = ['__host-platform', '__platform', 'platform_'];

/** Headers an app's own auth scheme uses, kept unless they carry a platform credential. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key']);
const PLATFORM_KEY = /ap_[A-Za-z0-9_-]{43}/;

/** Whether a credential header's value holds a platform API key, as a Bearer token or inside Basic's base64. */
export function carriesPlatformKey(value: string): boolean {
  if (PLATFORM_KEY.test(value)) return true;
  const basic = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(value);
  if (!basic) return false;
  try {
    return PLATFORM_KEY.test(atob(basic[1]!.replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    return false; // not base64: then it holds no key either
  }
}

export function scrubRequestHeaders(headers: Pick<HeaderReads, 'forEach'>): [string, string][] {
  const out: [string, string][] = [];
  // names arrive lowercase (Headers and Node's parsed headers both give them so)
  headers.forEach((value, name) => {
    if (
      DROP_IN.has(name) ||
      name.startsWith('x-platform-') ||
      name.startsWith('x-forwarded-') ||
      name.startsWith('proxy-') ||
      (CREDENTIAL_HEADERS.has(name) && carriesPlatformKey(value))
    )
      return;
    out.push([name, value]);
  });
  return out;
}

/**
 * A cookie app code sets, made safe for its neighbours, or null to drop it. Every app is a
 * subdomain of the apps host, which is not on the Public Suffix List, so a `Domain` attribute would
 * reach every other app (cookie planting, shadowing, cookie bombs): it is removed, leaving a
 * host-only cookie. Nameless cookies (`=name=value`, which browsers send as `name=value`) and names
 * in the platform's reserved namespace are dropped.
 */
export function appCookie(value: string): string | null {
  const [pair = '', ...attributes] = value.split(';');
  const eq = pair.indexOf('=');
  const name = (eq < 0 ? '' : pair.slice(0, eq)).trim();
  if (!name) return null;
  const lower = name.toLowerCase();
  if (PLATFORM_COOKIE_PREFIXES.some((p) => lower.startsWith(p))) return null;
  const kept = attributes.filter((a) => !/^\s*domain\s*(=|$)/i.test(a));
  return kept.length === attributes.length ? value : [pair, ...kept].join(';');
}

/**
 * The headers of an app's response, scrubbed, with the platform's request id. A plain object
 * when every name occurs once (the server adapter's fast path; repeated names other than
 * Set-Cookie are joined with ", " as Headers would); a Headers object only when the app sets
 * several cookies, which must stay separate lines.
 */
export function scrubResponseHeaders(
  pairs: [string, string][],
  requestId: string,
): Record<string, string> | Headers {
  // An ordinary object, which V8 keeps in its fast form (one made with a null prototype starts as a
  // dictionary, slower to fill and for the server to walk). Names are lowercase tokens, so none is an
  // inherited property other than `__proto__`'s accessor, which becomes an own entry like any other.
  const out: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of pairs) {
    const n = name.toLowerCase();
    if (DROP_OUT.has(n) || n.startsWith('x-platform-') || n === 'x-request-id') continue;
    if (n === 'set-cookie') {
      const cookie = appCookie(value);
      if (cookie) (cookies ??= []).push(cookie);
      continue;
    }
    const had = Object.hasOwn(out, n) ? out[n] : undefined;
    const v = had === undefined ? value : `${had}, ${value}`;
    if (n === '__proto__')
      Object.defineProperty(out, n, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[n] = v;
  }
  out['x-request-id'] = requestId;
  if (!Object.hasOwn(out, 'content-type')) out[UNTYPED] = '1';
  if (!cookies) return out;
  if (cookies.length === 1) {
    out['set-cookie'] = cookies[0]!;
    return out;
  }
  const headers = new Headers(out);
  for (const c of cookies) headers.append('set-cookie', c);
  return headers;
}

/** Response limits: beyond them the response never reaches the wire (a `runtime_error` instead). */
export const MAX_RESPONSE_HEADERS = 100;
export const MAX_RESPONSE_HEADER_BYTES = 32 * 1024;

/**
 * Why an app's response cannot be sent, or null. The status must be an integer from 200 to 599:
 * a 1xx (or anything else) would desynchronise the connection, which the next request, perhaps to
 * another app, would pay for. Headers are capped in count and bytes.
 */
export function badResponse(response: {
  status: unknown;
  headers: [string, string][];
}): 'bad_status' | 'headers_too_large' | null {
  const status = response.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
    return 'bad_status';
  if (response.headers.length > MAX_RESPONSE_HEADERS) return 'headers_too_large';
  let bytes = 0;
  for (const [name, value] of response.headers) bytes += name.length + value.length + 4;
  return bytes > MAX_RESPONSE_HEADER_BYTES ? 'headers_too_large' : null;
}
