/**
 * Request paths on an app origin, decoded segment by segment. Anything that could step outside
 * the release (encoded slashes or backslashes, `.`/`..`, NUL, bad percent-encoding, empty inner
 * segments) makes the path unresolvable, which the router answers with 404.
 */
export type AppPath = { segments: string[]; directory: boolean };

const PLAIN = /^(?:\/[A-Za-z0-9_~!$&'()*+,;=:@-][A-Za-z0-9._~!$&'()*+,;=:@-]*)*\/?$/;

export function decodeAppPath(pathname: string): AppPath | null {
  if (!pathname.startsWith('/')) return null;
  // Fast path: nothing encoded, no dot segments, no empty segments (the common case).
  if (PLAIN.test(pathname) && !pathname.includes('/.')) {
    const directory = pathname.endsWith('/');
    const body = directory ? pathname.slice(1, -1) : pathname.slice(1);
    return { segments: body ? body.split('/') : [], directory };
  }
  const raw = pathname.slice(1).split('/');
  const directory = pathname.endsWith('/');
  if (directory) raw.pop();
  const segments: string[] = [];
  for (const part of raw) {
    let seg: string;
    try {
      seg = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (seg === '' || seg === '.' || seg === '..' || /[/\\\u0000-\u001f]/.test(seg)) return null;
    segments.push(seg);
  }
  return { segments, directory };
}
