import { createHash, randomBytes } from 'node:crypto';

/** A bearer secret: 256 random bits, base64url (43 characters). */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored for a bearer secret: its SHA-256 (high-entropy tokens need no slow KDF). */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
