/**
 * Browser mutations on an app origin (`/_platform/auth/*`, `/_platform/data/*`). Every app under the
 * apps host is same-site to every other, so SameSite=Lax does not stop a sibling app's page from
 * posting here with the visitor's cookies. A mutation is refused when Origin or Fetch Metadata name
 * another origin; one that carries cookies must prove it comes from this origin's own pages (Origin
 * or `Sec-Fetch-Site: same-origin`); and a body must be `application/json`, which no cross-origin
 * form or no-CORS fetch can send. Non-browser clients without cookies send neither header and pass.
 */
export type Refusal = { status: number; code: string; message: string };

const isJson = (type: string | null) => !!type && /^application\/json\s*(;|$)/i.test(type.trim());

export function refuseMutation(req: Request, options: { body: boolean }): Refusal | null {
  const site = req.headers.get('sec-fetch-site');
  const origin = req.headers.get('origin');
  const url = new URL(req.url);
  const own = `${url.protocol}//${url.host}`;
  const crossSite: Refusal = { status: 403, code: 'forbidden', message: 'Cross-site requests to this endpoint are refused.' };
  if (site && site !== 'same-origin' && site !== 'none') return crossSite;
  if (origin && origin !== own) return crossSite;
  if (req.headers.has('cookie') && origin !== own && site !== 'same-origin') {
    return { status: 403, code: 'forbidden', message: "A request that carries cookies must come from this app's own pages (send Origin)." };
  }
  if (options.body && !isJson(req.headers.get('content-type'))) {
    return { status: 400, code: 'unsupported_media_type', message: 'Send the body as application/json.' };
  }
  return null;
}
