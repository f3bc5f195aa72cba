/**
 * Safe handling of JSON from outside: field maps that a `__proto__` or `constructor` key cannot
 * reach into, and a nesting limit checked without recursion, so deep input is refused with a 400
 * before anything (`JSON.stringify`, valibot, Postgres) recurses into it.
 */

/** The deepest nesting accepted in a request body or a stored `json` value. */
export const MAX_JSON_DEPTH = 64;

/** An empty string-keyed map with no prototype: `map['__proto__']` is just a key. */
export function fieldMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The path (`a.b.0`) of the first value nested deeper than `max`, or null; iterative. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [node, depth, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return path || '(root)';
    for (const [k, child] of Object.entries(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1, path ? `${path}.${k}` : k]);
  }
  return null;
}
