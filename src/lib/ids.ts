import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase

/** A random lowercase base32 string of `length` characters (5 bits of entropy each). */
export function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

/** Identifier with a type prefix, e.g. `usr_8k2m...` (20 random characters = 100 bits). */
export function newId(
  prefix:
    | 'usr'
    | 'acct'
    | 'key'
    | 'rel'
    | 'inv'
    | 'route'
    | 'file'
    | 'row'
    | 'sess'
    | 'dev'
    | 'opa'
    | 'bak'
    | 'lnk',
): string {
  return `${prefix}_${randomToken(20)}`;
}

/** The shape of an `app_id` (the contract: 12 to 24 lowercase letters/digits). */
export const APP_ID = /^[a-z0-9]{12,24}$/;

/** An `app_id`: 16 lowercase letters/digits (the contract allows 12 to 24). */
export function newAppId(): string {
  return randomToken(16);
}
