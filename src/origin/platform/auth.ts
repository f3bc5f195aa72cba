/**
 * `/_platform/auth/*` on an app origin, for apps with `auth.mode: app_users` (else 404):
 *   POST signup (only with public_signup) · POST login · POST logout · GET session
 *   GET invite (page) · POST invite/accept · GET verify (page) · POST verify
 * Mutations must be same-origin with a JSON body of at most 16 KiB; sign-up and login are
 * rate-limited per client and per e-mail (shared by every node).
 */
import { Hono } from 'hono';
import * as v from 'valibot';
import { hit, LIMITS, type Limit } from '../../abuse/limits.ts';
import { acceptInvite, INVITE_PAGE } from '../../app-auth/invites.ts';
import {
  LinkToken,
  LoginCredentials,
  login,
  logout,
  NewCredentials,
  NewPassword,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  sessionUser,
  signup,
  startSessionFor,
} from '../../app-auth/service.ts';
import { sendVerification, VERIFY_PAGE, verifyEmail } from '../../app-auth/verification.ts';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import { REQUEST_ID_HEADER } from '../../http/request-id.ts';
import { appUsersEnabled } from '../../releases/live.ts';
import { notAllowed, readBody, sameOrigin, send } from './body.ts';
import type { OriginEnv } from './env.ts';

const MAX_BODY = 16 * 1024;
const CREDENTIALS = 'e-mail or password format';
const InviteAcceptance = v.object({ token: LinkToken, password: NewPassword });
const Verification = v.object({ token: LinkToken });

/** Counts an attempt against each limit; throws 429 for the first one over its count. */
async function throttle(deps: Deps, what: string, checks: [string, Limit][]): Promise<void> {
  for (const [key, limit] of checks) {
    const h = await hit(deps.db, key, limit);
    if (h.limited)
      throw new ApiError(
        'abuse_throttled',
        `${what}; try again in ${h.retryAfterSeconds} seconds.`,
        { retry_after: h.retryAfterSeconds },
      );
  }
}

function page(html: string, requestId: string): Response {
  return new Response(html, {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      [REQUEST_ID_HEADER]: requestId,
    },
  });
}

const token = (c: { req: { raw: Request } }) =>
  readCookie(c.req.raw.headers.get('cookie'), SESSION_COOKIE);

export const authRoutes = new Hono<OriginEnv>({ strict: true })
  .use(async (c, next) => {
    if (!appUsersEnabled(c.env.release))
      throw new ApiError('not_found', 'This app has no app-user sign-in.');
    await next();
  })
  .get('/invite', (c) => page(INVITE_PAGE, c.env.requestId))
  .all('/invite', notAllowed('GET'))
  .get('/verify', (c) => page(VERIFY_PAGE, c.env.requestId))
  .get('/session', async (c) => {
    const user = await sessionUser(c.env.deps, c.env.app.appId, token(c));
    if (!user) throw new ApiError('unauthorized', 'Not signed in.');
    return send(c, 200, { user });
  })
  .all('/session', notAllowed('GET'))
  .post('/logout', async (c) => {
    sameOrigin(c.req.raw);
    await logout(c.env.deps, c.env.app.appId, token(c));
    return send(c, 200, { signed_out: true }, { 'set-cookie': sessionCookie('', 0) });
  })
  .post('/signup', async (c) => {
    const { deps, app, release, client } = c.env;
    sameOrigin(c.req.raw);
    const { email, password } = await readBody(c.req.raw, NewCredentials, MAX_BODY, CREDENTIALS);
    if (!release.manifest.resources.auth?.public_signup)
      throw new ApiError('forbidden', 'Sign-up is by invitation for this app.');
    await throttle(deps, 'Too many sign-ups from here', [
      [`app-signup:ip:${app.appId}:${client}`, LIMITS.appSignupPerClient],
    ]);
    const { user, token: t } = await signup(deps, app.appId, email, password);
    if (release.manifest.resources.auth?.email_verification)
      await sendVerification(deps, app.appId, release.manifest.app.name, user);
    return send(c, 201, { user }, { 'set-cookie': sessionCookie(t) });
  })
  .post('/login', async (c) => {
    const { deps, app, client } = c.env;
    sameOrigin(c.req.raw);
    const { email, password } = await readBody(c.req.raw, LoginCredentials, MAX_BODY, CREDENTIALS);
    await throttle(deps, 'Too many login attempts', [
      [`app-login:addr:${app.appId}:${email}`, LIMITS.appLoginPerEmail],
      [`app-login:ip:${app.appId}:${client}`, LIMITS.appLoginPerClient],
    ]);
    const { user, token: t } = await login(deps, app.appId, email, password);
    return send(c, 200, { user }, { 'set-cookie': sessionCookie(t) });
  })
  .post('/invite/accept', async (c) => {
    const { deps, app } = c.env;
    sameOrigin(c.req.raw);
    const body = await readBody(c.req.raw, InviteAcceptance, MAX_BODY, CREDENTIALS);
    const user = await acceptInvite(deps, app.appId, body.token, body.password);
    const { token: t } = await startSessionFor(deps, app.appId, user);
    return send(c, 201, { user }, { 'set-cookie': sessionCookie(t) });
  })
  .post('/verify', async (c) => {
    sameOrigin(c.req.raw);
    const body = await readBody(c.req.raw, Verification, MAX_BODY);
    return send(c, 200, { user: await verifyEmail(c.env.deps, c.env.app.appId, body.token) });
  })
  .all('/signup', notAllowed('POST'))
  .all('/login', notAllowed('POST'))
  .all('/logout', notAllowed('POST'))
  .all('/verify', notAllowed('GET', 'POST'))
  .all('/invite/accept', notAllowed('POST'));
