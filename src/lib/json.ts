/**
 * Safe handling of JSON from outside: field maps that a `__proto__` or `constructor` key cannot
 * reach into, and one walk without recursion that finds nesting too deep (refused before anything,
 * `JSON.stringify`, valibot, Postgres, recurses into it) and U+0000, which Postgres `text` and
 * `jsonb` cannot hold.
 */

/** The deepest nesting accepted in a request body or a stored `json` value. */
export const MAX_JSON_DEPTH = 64;

/** An empty string-keyed map with no prototype: `map['__proto__']` is just a key. */
export function fieldMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export type JsonProblem = { path: string; kind: 'deep' | 'nul' };

/**
 * The first place (`a.b.0`) in `value` nested deeper than `max`, or whose string or key holds
 * U+0000, or null. One iterative walk.
 */
export function jsonProblem(value: unknown, max = MAX_JSON_DEPTH): JsonProblem | null {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [node, depth, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\0')) return { path: path || '(root)', kind: 'nul' };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return { path: path || '(root)', kind: 'deep' };
    for (const [k, child] of Object.entries(node)) {
      const at = path ? `${path}.${k}` : k;
      if (k.includes('\0')) return { path: at, kind: 'nul' };
      if (typeof child === 'string' || (child !== null && typeof child === 'object'))
        stack.push([child, depth + 1, at]);
    }
  }
  return null;
}

/** The path of the first value nested deeper than `max`, or null (NUL characters allowed). */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [node, depth, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return path || '(root)';
    for (const [k, child] of Object.entries(node))
      if (child !== null && typeof child === 'object')
        stack.push([child, depth + 1, path ? `${path}.${k}` : k]);
  }
  return null;
}

/** The path of the first string or key holding U+0000, at any depth, or null. */
export const nulAt = (value: unknown): string | null => jsonProblem(value, Infinity)?.path ?? null;
