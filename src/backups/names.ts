/** A Postgres identifier, quoted: `quoteName('public', 'users')` is `"public"."users"`. */
export function quoteName(...parts: string[]): string {
  return parts.map((p) => `"${p.replaceAll('"', '""')}"`).join('.');
}
