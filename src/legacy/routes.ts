import { Hono } from 'hono';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';

const tags = ['Legacy'];
const retired = (operationId: string, summary: string, code: ErrorCode) =>
  operation({
    operationId,
    summary,
    description: 'Disabled: sign-in is passwordless. Always 410.',
    tags,
    security: 'none',
    responses: {},
    errors: [code],
  });

/** Retired password routes: they answer 410 with their codes, whatever the body or credentials. */
export function legacyRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.post(
    '/accounts',
    retired('passwordSignup', 'Retired password signup', 'password_signup_disabled'),
    () => {
      throw new ApiError(
        'password_signup_disabled',
        'Password signup is disabled; sign in with an e-mail link instead.',
      );
    },
  );
  r.post(
    '/auth/token',
    retired('passwordLogin', 'Retired password login', 'password_auth_disabled'),
    () => {
      throw new ApiError(
        'password_auth_disabled',
        'Password login is disabled; use an API key or the e-mail link sign-in.',
      );
    },
  );
  for (const step of ['request', 'confirm'] as const) {
    r.post(
      `/auth/password-reset/${step}`,
      retired(
        `passwordReset${step === 'request' ? 'Request' : 'Confirm'}`,
        `Retired password reset (${step})`,
        'password_auth_disabled',
      ),
      () => {
        throw new ApiError(
          'password_auth_disabled',
          'Passwords are not used any more, so there is nothing to reset.',
        );
      },
    );
  }
  r.post(
    '/platform/sessions',
    retired('passwordSession', 'Retired password console session', 'password_auth_disabled'),
    () => {
      throw new ApiError(
        'password_auth_disabled',
        'Password sessions are disabled; sign in with an e-mail link.',
      );
    },
  );
  return r;
}
