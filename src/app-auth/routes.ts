/**
 * `/_platform/auth/*` on an app origin (auth.mode app_users only, else 404):
 * `POST signup` (only with public_signup), `POST login`, `POST logout`, `GET session`.
 * Mutating requests from browsers must be same-origin (Origin / Sec-Fetch-Site checks).
 */
import type { Deps } from '../deps.ts';
import { errorBody } from '../errors.ts';
import { REQUEST_ID_HEADER } from '../http/base.ts';
import { readBodyLimited } from '../http/validate.ts';
import { ApiError } from '../errors.ts';
import { refuseMutation } from '../runtime/same-origin.ts';
import { appUsersEnabled, type ReleaseView } from '../runtime/live.ts';
import { acceptInvite, INVITE_PAGE } from './invites.ts';
import { sendVerification, VERIFY_PAGE, verifyEmail } from './verification.ts';
import { hit, LIMITS, type Hit, type Limit } from '../abuse/limits.ts';
import { checkCredentials, login, logout, readCookie, SESSION_COOKIE, sessionCookie, sessionUser, signup, startSessionFor } from './service.ts';

/** The first limit over its count, having counted an attempt against each (shared by every node). */
async function overLimit(deps: Deps, checks: [string, Limit][]): Promise<Hit | undefined> {
  for (const [key, limit] of checks) {
    const h = await hit(deps.db, key, limit);
    if (h.limited) return h;
  }
  return undefined;
}

export async function handleAuth(deps: Deps, input: { req: Request; appId: string; release: ReleaseView; action: string; requestId: string; client: string }): Promise<Response> {
  const { req, appId, release, action, requestId } = input;
  const headers = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'cache-control': 'no-store', [REQUEST_ID_HEADER]: requestId, ...extra });
  const fail = (status: number, code: string, message: string, details?: Record<string, unknown>) => new Response(JSON.stringify(errorBody(code, message, details)), { status, headers: headers() });
  const throttledResponse = (h: Hit, what: string) =>
    new Response(JSON.stringify(errorBody('abuse_throttled', `${what}; try again in ${h.retryAfterSeconds} seconds.`, { retry_after: h.retryAfterSeconds })), {
      status: 429,
      headers: headers({ 'retry-after': String(h.retryAfterSeconds) }),
    });
  if (!appUsersEnabled(release)) return fail(404, 'not_found', 'This app has no app-user sign-in.');
  const token = readCookie(req.headers.get('cookie'), SESSION_COOKIE);

  if (action === 'invite') {
    if (req.method !== 'GET') return fail(405, 'method_not_allowed', 'Use GET.');
    return new Response(INVITE_PAGE, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', [REQUEST_ID_HEADER]: requestId } });
  }
  if (action === 'verify' && req.method === 'GET') {
    return new Response(VERIFY_PAGE, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', [REQUEST_ID_HEADER]: requestId } });
  }
  if (action === 'session') {
    if (req.method !== 'GET') return fail(405, 'method_not_allowed', 'Use GET.');
    const user = await sessionUser(deps, appId, token);
    return user ? new Response(JSON.stringify({ user }), { status: 200, headers: headers() }) : fail(401, 'unauthorized', 'Not signed in.');
  }
  if (!['signup', 'login', 'logout', 'invite/accept', 'verify'].includes(action)) return fail(404, 'not_found', 'Unknown reserved path.');
  if (req.method !== 'POST') return fail(405, 'method_not_allowed', 'Use POST.');
  const refused = refuseMutation(req, { body: action !== 'logout' });
  if (refused) return fail(refused.status, refused.code, refused.message);

  if (action === 'logout') {
    await logout(deps, appId, token);
    return new Response(JSON.stringify({ signed_out: true }), { status: 200, headers: headers({ 'set-cookie': sessionCookie('', 0) }) });
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(await readBodyLimited(req, 16 * 1024, () => new ApiError('payload_too_large', 'Body too large.'))));
  } catch (err) {
    if (err instanceof ApiError) return fail(413, err.code, err.message);
    return fail(400, 'invalid_json', 'Request body is not valid JSON.');
  }
  try {
    if (action === 'verify') {
      const user = await verifyEmail(deps, appId, (body as { token?: unknown } | null)?.token);
      return new Response(JSON.stringify({ user }), { status: 200, headers: headers() });
    }
    if (action === 'invite/accept') {
      const b = (body ?? {}) as { token?: unknown; password?: unknown };
      const { password } = checkCredentials({ email: 'invitee@example.com', password: b.password });
      const user = await acceptInvite(deps, appId, b.token, password);
      const { token: t } = await startSessionFor(deps, appId, user);
      return new Response(JSON.stringify({ user }), { status: 201, headers: headers({ 'set-cookie': sessionCookie(t) }) });
    }
    const { email, password } = checkCredentials(body, { for: action === 'signup' ? 'new' : 'login' });
    if (action === 'signup') {
      if (!release.manifest.resources.auth?.public_signup) return fail(403, 'forbidden', 'Sign-up is by invitation for this app.');
      const tooMany = await overLimit(deps, [[`app-signup:ip:${appId}:${input.client}`, LIMITS.appSignupPerClient]]);
      if (tooMany) return throttledResponse(tooMany, 'Too many sign-ups from here');
      const { user, token: t } = await signup(deps, appId, email, password);
      if (release.manifest.resources.auth?.email_verification) await sendVerification(deps, appId, release.manifest.app.name, user);
      return new Response(JSON.stringify({ user }), { status: 201, headers: headers({ 'set-cookie': sessionCookie(t) }) });
    }
    const tooMany = await overLimit(deps, [
      [`app-login:addr:${appId}:${email}`, LIMITS.appLoginPerEmail],
      [`app-login:ip:${appId}:${input.client}`, LIMITS.appLoginPerClient],
    ]);
    if (tooMany) return throttledResponse(tooMany, 'Too many login attempts');
    const { user, token: t } = await login(deps, appId, email, password);
    return new Response(JSON.stringify({ user }), { status: 200, headers: headers({ 'set-cookie': sessionCookie(t) }) });
  } catch (err) {
    if (err instanceof ApiError) return fail(err.status, err.code, err.message, err.details);
    throw err;
  }
}
