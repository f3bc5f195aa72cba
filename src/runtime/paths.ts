/**
 * Request paths on an app origin, decoded segment by segment. Anything that could step outside
 * the release (encoded slashes or backslashes, `.`/`..`, NUL, bad percent-encoding, empty inner
 * segments) makes the path unresolvable, which the router answers with 404.
 */
export type AppPath = { segments: string[]; directory: boolean };

export function decodeAppPath(pathname: string): AppPath | null {
  if (!pathname.startsWith('/')) return null;
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
