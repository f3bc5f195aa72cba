import { randomBytes } from 'node:crypto';
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
