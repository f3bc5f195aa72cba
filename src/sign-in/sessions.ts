/**
 * Console sessions: a random 256-bit token in the `__Host-platform_session` cookie (HttpOnly,
 * Secure, SameSite=Lax, Path=/, no Domain), only its SHA-256 in Postgres, so sessions survive a
 * restart and work on every node. Idle expiry 7 days, absolute 30 days. Each session has its own
 * CSRF token, which cookie-authenticated mutations must echo in `X-Platform-CSRF`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Executor } from '../db/database.ts';
import { clock, fromNow } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';

export const SESSION_COOKIE = '__Host-platform_session';
export const PENDING_SIGNUP_COOKIE = '__Host-platform_pending_signup';
export const SESSION_IDLE_MS = 7 * 86_400_000;
export const SESSION_ABSOLUTE_MS = 30 * 86_400_000;
/** last_seen_at is written at most this often per session. */
const TOUCH_MS = 60_000;

export type ConsoleSession = {
  id: string;
  userId: string;
  email: string;
  defaultAccountId: string | null;
  csrfToken: string;
  expiresAt: Date;
};

export async function createSession(
  db: Executor,
  userId: string,
): Promise<{ token: string; session: { id: string; csrfToken: string; expiresAt: Date } }> {
  const token = newSecretToken();
  const id = newId('sess');
  const csrfToken = newSecretToken();
  const now = clock.now();
  const expiresAt = fromNow(SESSION_ABSOLUTE_MS);
  await db
    .insertInto('console_sessions')
    .values({
      id,
      token_hash: tokenHash(token),
      user_id: userId,
      csrf_token: csrfToken,
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
    })
    .execute();
  return { token, session: { id, csrfToken, expiresAt } };
}

/** The live session behind a cookie value, or undefined (unknown, revoked, idle too long or past its end). */
export async function findSession(
  db: Executor,
  token: string | undefined,
): Promise<ConsoleSession | undefined> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const now = clock.now();
  const row = await db
    .selectFrom('console_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      's.csrf_token',
      's.expires_at',
      's.last_seen_at',
      'u.email',
      'u.default_account_id',
    ])
    .where('s.token_hash', '=', tokenHash(token))
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.last_seen_at', '>', new Date(now.getTime() - SESSION_IDLE_MS))
    .executeTakeFirst();
  if (!row) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() > TOUCH_MS) {
    await db
      .updateTable('console_sessions')
      .set({ last_seen_at: now })
      .where('id', '=', row.id)
      .execute();
  }
  return {
    id: row.id,
    userId: row.user_id,
    email: row.email,
    defaultAccountId: row.default_account_id,
    csrfToken: row.csrf_token,
    expiresAt: row.expires_at,
  };
}

export async function revokeSession(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('console_sessions')
    .set({ revoked_at: clock.now() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** When the session ends if it stays in use: the earlier of its absolute end and a week of idleness. */
export function sessionEnds(session: Pick<ConsoleSession, 'expiresAt'>): Date {
  return new Date(Math.min(session.expiresAt.getTime(), clock.now().getTime() + SESSION_IDLE_MS));
}

/** A `__Host-` cookie: Secure, Path=/, no Domain, so only the console host ever receives it. */
export function hostCookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

/** Every value of cookie `name` in a Cookie header, in order. */
export function cookieValues(header: string | undefined | null, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/** Constant-time comparison of two tokens. */
export function sameToken(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
