/**
 * Preview releases: stored without moving the live pointer and served at their own origin,
 * `<app_id>--<release token>.<apps host>`, to a browser that holds a grant. A grant is an HMAC over
 * the release and an expiry, keyed per app from the platform's secrets key, so any node can check it
 * without a query and nothing is stored; it reaches a browser through a link (`/_platform/preview?grant=`)
 * that sets a host-only cookie on the preview origin and redirects to the page asked for.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { publicUrl, type Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { APP_ID } from '../lib/ids.ts';
import type { PreviewLink } from '../apps/schemas.ts';

/** How long a preview link (and the cookie it sets) lets a browser in. */
export const PREVIEW_GRANT_SECONDS = 7 * 24 * 3600;
/** `__Host-`: Secure, Path=/, no Domain, so no other origin can set or read it; removed before app code runs. */
export const PREVIEW_COOKIE = '__Host-platform_preview';
/** The reserved path on a preview origin that turns a link's grant into the cookie. */
export const PREVIEW_ENTRY_PATH = '/_platform/preview';

const TOKEN = /^[0-9a-z]{20}$/;

/** The host label of a release's preview origin. */
export function previewLabel(appId: string, releaseId: string): string {
  return `${appId}--${releaseId.slice('rel_'.length)}`;
}

/** A host label that names a preview: the app and the release, or undefined. */
export function parsePreviewLabel(label: string): { appId: string; releaseId: string } | undefined {
  const at = label.indexOf('--');
  if (at < 0) return undefined;
  const appId = label.slice(0, at);
  const token = label.slice(at + 2);
  return APP_ID.test(appId) && TOKEN.test(token) ? { appId, releaseId: `rel_${token}` } : undefined;
}

export function previewOrigin(config: Config, appId: string, releaseId: string): string {
  return publicUrl(config, `${previewLabel(appId, releaseId)}.${config.hosts.apps}`);
}

function grantKey(deps: Pick<Deps, 'secretsKey'>, appId: string): Buffer {
  return Buffer.from(
    hkdfSync(
      'sha256',
      deps.secretsKey,
      Buffer.from(appId),
      Buffer.from('platform preview grants v1'),
      32,
    ),
  );
}

function mac(deps: Pick<Deps, 'secretsKey'>, appId: string, releaseId: string, expires: number) {
  return createHmac('sha256', grantKey(deps, appId))
    .update(`${releaseId}\n${expires}`)
    .digest('base64url');
}

/** `<expires>.<mac>`: lets a browser into one release's preview until `expires` (Unix seconds). */
export function signGrant(
  deps: Pick<Deps, 'secretsKey'>,
  appId: string,
  releaseId: string,
  expires: number,
): string {
  return `${expires}.${mac(deps, appId, releaseId, expires)}`;
}

/** When a grant (`<expires>.<mac>`) expires, in Unix seconds. */
const expiryOf = (grant: string) => Number(grant.slice(0, grant.indexOf('.')));

/**
 * The second a grant counts as issued in: links made after a revocation are issued after its
 * second, so one made in the same second as the revocation still opens, and none made before it.
 */
function issueSecond(now: number, revokedAt: Date | null | undefined): number {
  const second = Math.floor(now / 1000);
  return revokedAt ? Math.max(second, Math.floor(revokedAt.getTime() / 1000) + 1) : second;
}

/** Whether a grant was issued before the app's previews were revoked (its expiry tells when). */
export function grantRevoked(grant: string, revokedAt: Date | null | undefined): boolean {
  if (!revokedAt) return false;
  const issued = expiryOf(grant) - PREVIEW_GRANT_SECONDS;
  return issued <= Math.floor(revokedAt.getTime() / 1000);
}

/** Whether `grant` opens this release's preview now (revocation aside: see `grantRevoked`). */
export function grantOpens(
  deps: Pick<Deps, 'secretsKey'>,
  appId: string,
  releaseId: string,
  grant: string | null | undefined,
  now = Date.now(),
): boolean {
  const m = grant ? /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(grant) : null;
  if (!m) return false;
  const expires = Number(m[1]);
  if (expires * 1000 <= now) return false;
  const expected = Buffer.from(mac(deps, appId, releaseId, expires));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** A link that opens a release's preview in a browser for PREVIEW_GRANT_SECONDS. */
export function previewLink(
  deps: Pick<Deps, 'secretsKey' | 'config'>,
  app: { id: string; previews_revoked_at: Date | null },
  releaseId: string,
  now = Date.now(),
): PreviewLink {
  const appId = app.id;
  const expires = issueSecond(now, app.previews_revoked_at) + PREVIEW_GRANT_SECONDS;
  const origin = previewOrigin(deps.config, appId, releaseId);
  const grant = signGrant(deps, appId, releaseId, expires);
  return {
    release_id: releaseId,
    origin,
    url: `${origin}${PREVIEW_ENTRY_PATH}?grant=${grant}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

/** The preview cookie's value in a Cookie header, if any. */
export function previewCookie(cookieHeader: string | null): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === PREVIEW_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function previewSetCookie(grant: string, now = Date.now()): string {
  const expires = expiryOf(grant);
  const maxAge = Math.max(0, expires - Math.floor(now / 1000));
  return `${PREVIEW_COOKIE}=${grant}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAge}`;
}
