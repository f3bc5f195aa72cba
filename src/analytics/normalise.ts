/**
 * What analytics may store of a request: its path with ids folded (`/users/42` → `/users/:id`;
 * digits, UUIDs, long hex and long mixed base62 segments), never the query or fragment; and its
 * referrer as a host name only (lowercase, `www.` dropped; empty, unparseable and self-referrals
 * count as direct). Both are memoised in bounded maps: the same few paths and referrers repeat.
 */
const MAX_PATH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isId(segment: string): boolean {
  if (/^\d+$/.test(segment)) return true;
  if (segment.length === 36 && UUID.test(segment)) return true;
  if (segment.length >= 16 && /^[0-9a-f]+$/i.test(segment)) return true;
  // long base62 tokens with letters and digits mixed (ids, hashes); plain words are kept
  return (
    segment.length >= 16 &&
    /^[A-Za-z0-9_-]+$/.test(segment) &&
    /\d/.test(segment) &&
    /[A-Za-z]/.test(segment)
  );
}

const paths = new Map<string, string>();

export function normalisePath(pathname: string): string {
  let out = paths.get(pathname);
  if (out !== undefined) return out;
  const cut = pathname.search(/[?#]/);
  const raw = cut >= 0 ? pathname.slice(0, cut) : pathname;
  out = raw
    .split('/')
    .map((s) => (s && isId(s) ? ':id' : s))
    .join('/');
  if (!out.startsWith('/')) out = '/' + out;
  if (out.length > MAX_PATH) out = out.slice(0, MAX_PATH) + '…';
  if (paths.size >= 10_000) paths.clear();
  paths.set(pathname, out);
  return out;
}

const referrers = new Map<string, string>();
const bare = (h: string) =>
  h
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');

/** The referrer's domain, or `(direct)` for none, unparseable, non-web or the request's own host. */
export function referrerDomain(referrer: string, ownHost: string): string {
  let domain = referrers.get(referrer);
  if (domain === undefined) {
    domain = '(direct)';
    try {
      const u = new URL(referrer);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname)
        domain = bare(u.hostname);
    } catch {
      // unparseable: direct
    }
    if (referrers.size >= 10_000) referrers.clear();
    referrers.set(referrer, domain);
  }
  return domain === bare(ownHost) ? '(direct)' : domain;
}
