/**
 * Header hygiene at the sandbox boundary. Going in, app code never sees platform headers,
 * cookies, credentials or proxy internals. Coming out, hop-by-hop headers are dropped and an
 * app cannot set cookies in the platform's reserved namespace.
 */
const DROP_IN = new Set([
  'cookie',
  'authorization',
  'proxy-authorization',
  'x-api-key',
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
const DROP_OUT = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']);
export const PLATFORM_COOKIE_PREFIXES = ['__host-platform', '__platform', 'platform_'];

export function scrubRequestHeaders(headers: Headers): [string, string][] {
  const out: [string, string][] = [];
  headers.forEach((value, name) => {
    const n = name.toLowerCase();
    if (DROP_IN.has(n) || n.startsWith('x-platform-') || n.startsWith('x-forwarded-') || n.startsWith('proxy-')) return;
    out.push([n, value]);
  });
  return out;
}

/**
 * The headers of an app's response, scrubbed, with the platform's request id. A plain object
 * when every name occurs once (the server adapter's fast path; repeated names other than
 * Set-Cookie are joined with ", " as Headers would); a Headers object only when the app sets
 * several cookies, which must stay separate lines.
 */
export function scrubResponseHeaders(pairs: [string, string][], requestId: string): Record<string, string> | Headers {
  // No prototype, so a header named `__proto__` is an ordinary entry.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let cookies: string[] | undefined;
  for (const [name, value] of pairs) {
    const n = name.toLowerCase();
    if (DROP_OUT.has(n) || n.startsWith('x-platform-') || n === 'x-request-id') continue;
    if (n === 'set-cookie') {
      const cookieName = value.split('=')[0]!.trim().toLowerCase();
      if (PLATFORM_COOKIE_PREFIXES.some((p) => cookieName.startsWith(p))) continue;
      (cookies ??= []).push(value);
      continue;
    }
    out[n] = n in out ? `${out[n]}, ${value}` : value;
  }
  out['x-request-id'] = requestId;
  if (!cookies) return out;
  if (cookies.length === 1) {
    out['set-cookie'] = cookies[0]!;
    return out;
  }
  const headers = new Headers(out);
  for (const c of cookies) headers.append('set-cookie', c);
  return headers;
}
