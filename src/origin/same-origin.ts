/**
 * Browser mutations on an app origin (`/_platform/auth/*`, `/_platform/data/*`). Every app under the
 * apps host is same-site to every other, so SameSite=Lax does not stop a sibling app's page from
 * posting here with the visitor's cookies. A mutation is refused when Origin or Fetch Metadata name
 * another origin; one that carries cookies must prove it comes from this origin's own pages (Origin
 * or `Sec-Fetch-Site: same-origin`); and a body must be `application/json` (`isJsonType`), which no
 * cross-origin form or no-CORS fetch can send. Non-browser clients without cookies send neither header and pass.
 */
import { ApiError } from '../errors.ts';

/** The one body type a cross-origin form or no-CORS fetch cannot send. */
export const isJsonType = (type: string | null) =>
  !!type && /^application\/json\s*(;|$)/i.test(type.trim());

export function refuseMutation(req: Request): ApiError | null {
  const site = req.headers.get('sec-fetch-site');
  const origin = req.headers.get('origin');
  const url = new URL(req.url);
  const own = `${url.protocol}//${url.host}`;
  const crossSite = () =>
    new ApiError('forbidden', 'Cross-site requests to this endpoint are refused.');
  if (site && site !== 'same-origin' && site !== 'none') return crossSite();
  if (origin && origin !== own) return crossSite();
  if (req.headers.has('cookie') && origin !== own && site !== 'same-origin') {
    return new ApiError(
      'forbidden',
      "A request that carries cookies must come from this app's own pages (send Origin).",
    );
  }
  return null;
}
