/** Entity tags for content-addressed bytes, and conditional-request matching (RFC 9110). */

/** The strong entity tag of some bytes: their SHA-256, base64url (43 characters), quoted. */
export function etagOf(sha256: Uint8Array): string {
  return `"${Buffer.from(sha256.buffer, sha256.byteOffset, sha256.byteLength).toString('base64url')}"`;
}

/** RFC 9110 If-None-Match: `*` or a list of entity tags, compared weakly. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}
