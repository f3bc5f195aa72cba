/**
 * Passwordless sign-in on `/v0`: request a link, confirm it, complete a sign-up, read or end the
 * console session. Links and cookies belong to the console host: confirming and completing a
 * sign-up answer 404 on the API host.
 */
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { membershipList } from '../accounts/queries.ts';
import { userIdentity } from '../users/service.ts';
import { enforce, LIMITS } from '../abuse/limits.ts';
import { errors } from '../errors.ts';
import { refuseCrossSite, sessionOnly } from '../http/auth.ts';
import { clientAddress } from '../http/client.ts';
import type { Env } from '../http/env.ts';
import { mark, operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { publicUrl } from '../config.ts';
import {
  EmailConfirmRequest,
  EmailLinkRequest,
  EmailLinkSent,
  PlatformSession,
  SignedIn,
  SignedOut,
  SignupCompleteRequest,
  SignupRequired,
} from './schemas.ts';
import {
  completeSignup,
  confirmToken,
  PENDING_SIGNUP_MINUTES,
  requestLink,
  type Signed,
} from './service.ts';
import { isOperator } from '../operators/queries.ts';
import {
  cookieValues,
  hostCookie,
  PENDING_SIGNUP_COOKIE,
  revokeSession,
  SESSION_ABSOLUTE_MS,
  SESSION_COOKIE,
  sessionEnds,
} from './sessions.ts';

const tags = ['Sign-in'];
const request = operation({
  operationId: 'requestEmailLink',
  summary: 'E-mail a sign-in link',
  description:
    'Always 202 `{status: "sent"}`, whether or not the address has a user. The link opens the console\'s confirm page with a one-time token in its fragment, valid 15 minutes; asking again does not cancel an earlier link.',
  tags,
  security: 'none',
  responses: { 202: EmailLinkSent },
  errors: ['abuse_throttled'],
});
const confirm = operation({
  operationId: 'confirmEmailLink',
  summary: 'Consume a sign-in link (console host)',
  description:
    'An existing user is signed in: `signed_in` and the `__Host-platform_session` cookie. A new address gets `signup_required` and the `__Host-platform_pending_signup` cookie (30 minutes) for `POST /v0/auth/signup/complete`.',
  tags,
  security: 'none',
  responses: { 200: v.union([SignedIn, SignupRequired]) },
  errors: ['invalid_email_auth_token', 'csrf_rejected', 'abuse_throttled', 'not_found'],
});
const signup = operation({
  operationId: 'completeSignup',
  summary: 'Finish signing up: username, own account, session (console host)',
  description:
    'Needs the pending-signup cookie from `confirmEmailLink`. `account_name` defaults to the username.',
  tags,
  security: 'none',
  responses: { 201: SignedIn },
  errors: [
    'invalid_pending_signup',
    'email_already_registered',
    'username_taken',
    'csrf_rejected',
    'abuse_throttled',
    'not_found',
  ],
});
const readSession = operation({
  operationId: 'getPlatformSession',
  summary: 'Read the current console session',
  tags,
  security: 'session',
  responses: { 200: PlatformSession },
});
const endSession = operation({
  operationId: 'deletePlatformSession',
  summary: 'Sign out: revoke this console session only',
  description: 'API keys and other sessions keep working. The cookie is cleared.',
  tags,
  security: 'session',
  responses: { 200: SignedOut },
});

/** These routes exist on the console host only: its cookies are the point of them. */
function consoleOnly(onConsole: boolean) {
  return mark(async (c, next) => {
    if (!onConsole)
      throw errors.notFound(
        `This route is on the console (${publicUrl(c.var.deps.config, c.var.deps.config.hosts.console)}); it`,
      );
    await next();
  }, {});
}

function signedInBody(s: Signed): SignedIn {
  return {
    status: 'signed_in',
    user: { id: s.userId, email: s.email, username: s.username },
    default_account_id: s.defaultAccountId,
    csrf_token: s.csrfToken,
  };
}

function setSessionCookie(c: Context<Env>, token: string): void {
  c.header('Set-Cookie', hostCookie(SESSION_COOKIE, token, SESSION_ABSOLUTE_MS / 1000), {
    append: true,
  });
  c.header('Cache-Control', 'no-store');
}

/** `/v0/auth/email/*` and `/v0/auth/signup/complete`: no authentication. */
export function signInRoutes(options: { console: boolean }): Hono<Env> {
  const r = new Hono<Env>();

  r.post('/auth/email/request', request, jsonBody(EmailLinkRequest), async (c) => {
    const { email } = bodyOf(c, EmailLinkRequest);
    const { db } = c.var.deps;
    await enforce(db, 'sign-in e-mails', [
      [`email-request:addr:${email}`, LIMITS.emailRequestPerAddress],
      [`email-request:ip:${clientAddress(c)}`, LIMITS.emailRequestPerClient],
    ]);
    await requestLink(c.var.deps, email);
    return request.reply(c, 202, { status: 'sent' });
  });

  r.post(
    '/auth/email/confirm',
    confirm,
    consoleOnly(options.console),
    jsonBody(EmailConfirmRequest),
    async (c) => {
      refuseCrossSite(c);
      await enforce(c.var.deps.db, 'sign-in attempts', [
        [`email-confirm:ip:${clientAddress(c)}`, LIMITS.emailConfirmPerClient],
      ]);
      const result = await confirmToken(c.var.deps.db, bodyOf(c, EmailConfirmRequest).token);
      c.header('Cache-Control', 'no-store');
      if ('signedIn' in result) {
        setSessionCookie(c, result.signedIn.token);
        return confirm.reply(c, 200, signedInBody(result.signedIn));
      }
      c.header(
        'Set-Cookie',
        hostCookie(PENDING_SIGNUP_COOKIE, result.pending.token, PENDING_SIGNUP_MINUTES * 60),
        { append: true },
      );
      return confirm.reply(c, 200, { status: 'signup_required', email: result.pending.email });
    },
  );

  r.post(
    '/auth/signup/complete',
    signup,
    consoleOnly(options.console),
    jsonBody(SignupCompleteRequest),
    async (c) => {
      refuseCrossSite(c);
      await enforce(c.var.deps.db, 'sign-ups', [
        [`signup:ip:${clientAddress(c)}`, LIMITS.signupPerClient],
      ]);
      const body = bodyOf(c, SignupCompleteRequest);
      const pending = cookieValues(c.req.header('cookie'), PENDING_SIGNUP_COOKIE)[0];
      const signed = await completeSignup(c.var.deps.db, pending, {
        username: body.username,
        accountName: body.account_name,
        planKey: c.var.deps.config.defaultPlan,
      });
      setSessionCookie(c, signed.token);
      c.header('Set-Cookie', hostCookie(PENDING_SIGNUP_COOKIE, '', 0), { append: true });
      return signup.reply(c, 201, signedInBody(signed));
    },
  );

  return r;
}

/** `/v0/platform/session`: the console session itself (after authentication). */
export function sessionRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/', readSession, async (c) => {
    const session = sessionOnly(c); // loaded by authenticate(): no second lookup
    const { db } = c.var.deps;
    const actor = c.var.actor;
    const user = await userIdentity(db, actor.userId);
    c.header('Cache-Control', 'no-store');
    return readSession.reply(c, 200, {
      user,
      ...(await membershipList(db, actor.userId, actor.defaultAccountId)),
      csrf_token: session.csrfToken,
      expires_at: sessionEnds(session).toISOString(),
      operator: await isOperator(db, actor.userId),
    });
  });

  r.delete('/', endSession, async (c) => {
    await revokeSession(c.var.deps.db, sessionOnly(c).id);
    c.header('Set-Cookie', hostCookie(SESSION_COOKIE, '', 0));
    return endSession.reply(c, 200, { status: 'signed_out' });
  });

  return r;
}
