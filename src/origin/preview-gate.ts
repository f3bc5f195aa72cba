/**
 * The door of a preview origin (src/releases/previews.ts): `/robots.txt` refuses every crawler, the
 * entry link turns its grant into the cookie, and a request without a grant that opens this release
 * is refused before anything of the app is read. Every answer says `noindex`.
 */
import type { Deps } from '../deps.ts';
import { errorBody } from '../errors.ts';
import { REQUEST_ID_HEADER } from '../http/request-id.ts';
import {
  grantOpens,
  grantRevoked,
  PREVIEW_ENTRY_PATH,
  previewCookie,
  previewSetCookie,
} from '../releases/previews.ts';
import { originJson } from './respond.ts';
import { sameOriginPath } from '../lib/same-origin-path.ts';

export const NOINDEX = { 'x-robots-tag': 'noindex, nofollow' };

/** Marks an answer of a preview origin as never to be indexed (app answers included). */
export function noindex(res: Response): Response {
  try {
    res.headers.set('x-robots-tag', NOINDEX['x-robots-tag']);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set('x-robots-tag', NOINDEX['x-robots-tag']);
    return copy;
  }
}

function privatePage(req: Request, requestId: string, why: string): Response {
  if (req.headers.get('sec-fetch-mode') !== 'navigate' || req.method !== 'GET')
    return originJson(401, errorBody('unauthorized', why), requestId, {
      ...NOINDEX,
      'cache-control': 'no-store',
    });
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>This preview is private</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:15vh auto;padding:0 1rem;color:#1d2430}code{background:#eef1f5;padding:.1em .3em;border-radius:4px}@media (prefers-color-scheme:dark){body{background:#12151b;color:#e7eaf0}code{background:#232935}}</style></head><body><h1>This preview is private</h1><p>${why}</p><p>Open it from the app's Releases page in the console, or with the link <code>platform publish --preview</code> printed.</p><p>Request <code>${requestId.replace(/[^\w.-]/g, '')}</code></p></body></html>`,
    {
      status: 401,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy':
          "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
        'cache-control': 'no-store',
        ...NOINDEX,
        [REQUEST_ID_HEADER]: requestId,
      },
    },
  );
}

const REVOKED =
  'The preview links of this app were revoked after this one was made: ask for a new link.';

/**
 * What the door answers itself (robots.txt, the entry link, a refusal), or undefined when the
 * request holds a grant for this release and goes on to the app. `app` (cached) is read only for a
 * grant whose signature holds, for its cut-off for links.
 */
export async function previewGate(
  deps: Pick<Deps, 'secretsKey'>,
  req: Request,
  target: { appId: string; releaseId: string },
  pathname: string,
  requestId: string,
  app: () => Promise<{ previewsRevokedAt?: Date | null | undefined } | null>,
): Promise<Response | undefined> {
  const revokedAt = async () => (await app())?.previewsRevokedAt;
  if (pathname === '/robots.txt')
    return new Response('User-agent: *\nDisallow: /\n', {
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        ...NOINDEX,
        [REQUEST_ID_HEADER]: requestId,
      },
    });
  if (pathname === PREVIEW_ENTRY_PATH) {
    const url = new URL(req.url);
    const grant = url.searchParams.get('grant');
    if (!grantOpens(deps, target.appId, target.releaseId, grant))
      return privatePage(
        req,
        requestId,
        'This preview link has expired or is not for this release.',
      );
    if (grantRevoked(grant!, await revokedAt())) return privatePage(req, requestId, REVOKED);
    return new Response(null, {
      status: 303,
      headers: {
        location: sameOriginPath(url.searchParams.get('to')),
        'set-cookie': previewSetCookie(grant!),
        'cache-control': 'no-store',
        // the grant is in this URL: it must not leak to the next page's requests
        'referrer-policy': 'no-referrer',
        ...NOINDEX,
        [REQUEST_ID_HEADER]: requestId,
      },
    });
  }
  const grant = previewCookie(req.headers.get('cookie'));
  if (grantOpens(deps, target.appId, target.releaseId, grant))
    return grantRevoked(grant!, await revokedAt())
      ? privatePage(req, requestId, REVOKED)
      : undefined;
  return privatePage(
    req,
    requestId,
    grant
      ? 'Your access to this preview has expired.'
      : 'Previews are open to the members of the app’s account and to whoever holds a preview link.',
  );
}
