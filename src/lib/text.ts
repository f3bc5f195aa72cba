/**
 * Postgres `text` and `jsonb` cannot hold U+0000. A value that contains it is refused with a clear
 * error (or, for an id, simply matches nothing) before it reaches a query, instead of failing there.
 */

/** The path (`a.b.0`) of the first string or key that contains U+0000, or null; iterative. */
export function nulAt(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\0')) return path || '(root)';
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    for (const [k, child] of Object.entries(node)) {
      const at = path ? `${path}.${k}` : k;
      if (k.includes('\0')) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

/** An id app code passed: a string that can be stored, else nothing to look up. */
export const lookupId = (id: unknown): string | undefined => (typeof id === 'string' && !id.includes('\0') ? id : undefined);
