import { Hono } from 'hono';
import { ApiError } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { describe } from '../http/validate.ts';

const gone = { 410: { description: 'Disabled: sign-in is passwordless' } };

/** Retired password routes: they answer 410 with their codes, whatever the body or credentials. */
export function legacyRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.post('/accounts', describe({ summary: 'Retired password signup', tags: ['Legacy'], responses: gone, auth: false }), () => {
    throw new ApiError('password_signup_disabled', 'Password signup is disabled; sign in with an e-mail link instead.');
  });
  r.post('/auth/token', describe({ summary: 'Retired password login', tags: ['Legacy'], responses: gone, auth: false }), () => {
    throw new ApiError('password_auth_disabled', 'Password login is disabled; use an API key or the e-mail link sign-in.');
  });
  for (const step of ['request', 'confirm'] as const) {
    r.post(`/auth/password-reset/${step}`, describe({ summary: `Retired password reset (${step})`, tags: ['Legacy'], responses: gone, auth: false }), () => {
      throw new ApiError('password_auth_disabled', 'Passwords are not used any more, so there is nothing to reset.');
    });
  }
  return r;
}
