import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { tokenHash } from '../lib/tokens.ts';

/** `ap_` + 32 random bytes in base64url (43 characters). */
export function generateApiKey(): { raw: string; hash: Buffer; prefix: string } {
  const raw = `ap_${randomBytes(32).toString('base64url')}`;
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, 11) };
}

/** Keys carry 256 bits of entropy, so a plain SHA-256 is a safe, fast lookup hash. */
export function hashApiKey(raw: string): Buffer {
  return tokenHash(raw);
}

export const API_KEY_SHAPE = /^ap_[A-Za-z0-9_-]{43}$/;

/** Live (unrevoked) keys one user may hold: enough for every machine and CI job, not a table to fill. */
export const MAX_LIVE_KEYS = 100;

/** 409 for a user who holds MAX_LIVE_KEYS live keys already. */
export function tooManyKeys(live: number): ApiError {
  return new ApiError(
    'conflict',
    `You have ${live} live API keys, the most one user may hold (${MAX_LIVE_KEYS}). Revoke keys you no longer use (the console's API keys page, or DELETE /v0/auth/api-keys/<id>), then try again.`,
    { live_keys: live, limit: MAX_LIVE_KEYS },
  );
}
