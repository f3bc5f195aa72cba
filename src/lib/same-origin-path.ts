/**
 * The one test of a return path (a sign-in's `next`, a preview link's `to`, a redirect the platform
 * builds from a request's path): resolve it as a browser resolves a Location header, which drops
 * tabs and newlines, reads `\` as `/`, percent-encodes what is not ASCII and removes dot segments,
 * and keep it only if it stays on the page's own origin. The answer is what the browser would
 * request, serialised (ASCII, no control characters, so always a valid header value), or
 * `fallback`. It is self-contained on purpose: the console serves this same function to its pages
 * (`/assets/same-origin-path.js`), so the server and the browser decide alike.
 */
export function sameOriginPath(raw: unknown, fallback = '/'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 4096) return fallback;
  const base = 'http://same-origin.invalid';
  let url: URL;
  try {
    url = new URL(raw, `${base}/`);
  } catch {
    return fallback;
  }
  if (url.origin !== base || url.username || url.password) return fallback;
  const path = url.pathname + url.search + url.hash;
  // dot segments can leave `//host` behind (`/.//host`), which would be read as another origin
  return path.startsWith('//') ? fallback : path;
}
