/** One request on its way through the app origin (src/origin/plane.ts). */
import type { RouteKind, Target } from '../analytics/collector.ts';
import type { HeaderReads } from '../http/parsed-headers.ts';

/** Path and query of an absolute URL without a full parse (the URL is already normalised by the server). */
function splitUrl(url: string): { pathname: string; search: string } {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return { pathname: '/', search: '' };
  const hash = url.indexOf('#', start);
  const end = hash < 0 ? url.length : hash;
  const q = url.indexOf('?', start);
  return q < 0 || q > end
    ? { pathname: url.slice(start, end), search: '' }
    : { pathname: url.slice(start, q), search: url.slice(q, end) };
}

/** One request on its way through the origin: what every step reads, and what answered it. */
export type OriginRequest = {
  req: Request;
  reads: HeaderReads;
  requestId: string;
  client: string;
  /** how the host named the app (its canonical origin, a slug, a custom domain) */
  via: RouteKind;
  /** the alias host name, or null on the canonical origin */
  host: string | null;
  pathname: string;
  search: string;
  /** what answered: a static file until the server (or a reserved path) takes it */
  target: Target;
};

export function originRequest(
  req: Request,
  reads: HeaderReads,
  requestId: string,
  client: string,
  via: RouteKind,
  host: string | null,
): OriginRequest {
  const { pathname, search } = splitUrl(req.url);
  return { req, reads, requestId, client, via, host, pathname, search, target: 'static' };
}
