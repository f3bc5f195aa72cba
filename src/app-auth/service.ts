/**
 * App users of one app (auth.mode app_users): sign-up, login, logout, session lookup. Sessions are
 * random 256-bit tokens in a host-only cookie; only their SHA-256 is stored. Login answers the same
 * error for an unknown e-mail and a wrong password, after the same amount of work, and is
 * rate-limited per e-mail and per client.
 */
import * as v from 'valibot';
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import type { Manifest } from '../manifest/schema.ts';
import { newId } from '../lib/ids.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';
import { dummyHash, hashPassword, verifyPassword } from './passwords.ts';
import { ApiError } from '../errors.ts';

/** `__Host-`: Secure, Path=/, no Domain, so no other app under the apps host can set or shadow it. */
export const SESSION_COOKIE = '__Host-platform_app_session';
export const SESSION_DAYS = 30;
export type AppUser = { id: string; email: string; roles: string[]; verified: boolean };

function toUser(row: { id: string; email: string; roles: string[]; verified: boolean }): AppUser {
  return { id: row.id, email: row.email, roles: row.roles, verified: row.verified };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const Email = v.pipe(
  v.string('must be an e-mail address'),
  v.check((s) => s.length <= 254 && EMAIL.test(s.trim()), 'must be an e-mail address'),
  v.trim(),
  v.toLowerCase(),
);
/** A new password: 8 to 256 characters. */
export const NewPassword = v.pipe(
  v.string('must be 8 to 256 characters'),
  v.check((s) => s.length >= 8 && s.length <= 256, 'must be 8 to 256 characters'),
);
/**
 * A login applies only the upper bound, so a wrong password always gets the same 401 and a future
 * length rule never locks out existing users.
 */
const LoginPassword = v.pipe(
  v.string('must be a string of at most 256 characters'),
  v.maxLength(256, 'must be a string of at most 256 characters'),
);
/** `{email, password}` for sign-up (the e-mail comes out trimmed and lower-cased). */
export const NewCredentials = v.object({ email: Email, password: NewPassword });
/** `{email, password}` for login. */
export const LoginCredentials = v.object({ email: Email, password: LoginPassword });
/** A one-time token from a link: anything else than a short string is simply not a valid token. */
export const LinkToken = v.fallback(v.pipe(v.string(), v.maxLength(100)), '');

async function startSession(deps: Deps, appId: string, userId: string): Promise<string> {
  const token = newSecretToken();
  await deps.db
    .insertInto('app_sessions')
    .values({
      token_hash: tokenHash(token),
      app_id: appId,
      user_id: userId,
      expires_at: new Date(Date.now() + SESSION_DAYS * 86_400_000),
    })
    .execute();
  return token;
}

export async function startSessionFor(
  deps: Deps,
  appId: string,
  user: AppUser,
): Promise<{ token: string }> {
  return { token: await startSession(deps, appId, user.id) };
}

export async function signup(
  deps: Deps,
  appId: string,
  email: string,
  password: string,
): Promise<{ user: AppUser; token: string }> {
  const password_hash = await hashPassword(password);
  const row = await deps.db
    .insertInto('app_users')
    .values({ id: newId('usr'), app_id: appId, email, password_hash, roles: '[]' })
    .onConflict((oc) => oc.expression(sql`app_id, lower(email)`).doNothing())
    .returning(['id', 'email', 'roles', 'verified'])
    .executeTakeFirst();
  if (!row)
    throw new ApiError(
      'email_already_registered',
      'An account with this e-mail already exists; log in instead.',
    );
  return { user: toUser(row), token: await startSession(deps, appId, row.id) };
}

export async function login(
  deps: Deps,
  appId: string,
  email: string,
  password: string,
): Promise<{ user: AppUser; token: string }> {
  const row = await deps.db
    .selectFrom('app_users')
    .select(['id', 'email', 'roles', 'verified', 'password_hash', 'disabled_at'])
    .where('app_id', '=', appId)
    .where(sql`lower(email)`, '=', email)
    .executeTakeFirst();
  const ok = await verifyPassword(password, row?.password_hash ?? (await dummyHash()));
  if (!row || !ok) throw new ApiError('invalid_credentials', 'The e-mail or password is wrong.');
  if (row.disabled_at)
    throw new ApiError('forbidden', "This account is disabled by the app's team.");
  return { user: toUser(row), token: await startSession(deps, appId, row.id) };
}

export async function logout(deps: Deps, appId: string, token: string | undefined): Promise<void> {
  if (!token) return;
  await deps.db
    .updateTable('app_sessions')
    .set({ revoked_at: new Date() })
    .where('token_hash', '=', tokenHash(token))
    .where('app_id', '=', appId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The user of a session token on this app, or null (unknown, expired, revoked or another app's). */
export async function sessionUser(
  deps: Deps,
  appId: string,
  token: string | undefined,
): Promise<AppUser | null> {
  if (!token || token.length > 100) return null;
  const row = await deps.db
    .selectFrom('app_sessions as s')
    .innerJoin('app_users as u', 'u.id', 's.user_id')
    .select(['u.id', 'u.email', 'u.roles', 'u.verified'])
    .where('s.token_hash', '=', tokenHash(token))
    .where('s.app_id', '=', appId)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', new Date())
    .where('u.disabled_at', 'is', null)
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

/** The app user signed in on this request (session cookie), or null; null when the release has no app users. */
export async function requestUser(
  deps: Deps,
  appId: string,
  release: { manifest: Manifest },
  req: Request,
): Promise<AppUser | null> {
  if (release.manifest.resources.auth?.mode !== 'app_users') return null;
  return sessionUser(deps, appId, readCookie(req.headers.get('cookie'), SESSION_COOKIE));
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** Always Secure (a `__Host-` cookie must be); browsers accept it on `http://*.localhost` too. */
export function sessionCookie(token: string, maxAgeSeconds = SESSION_DAYS * 86_400): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}
