/**
 * The comparison every binding test makes: an app's JSON answer here against its control's (Miniflare,
 * Deno, a package's local server), member by member, every difference named at once, then whole.
 */
import * as assert from 'uvu/assert';

export function assertSameAnswers(label: string, mine: unknown, theirs: unknown): void {
  const a = (mine ?? {}) as Record<string, unknown>;
  const b = (theirs ?? {}) as Record<string, unknown>;
  const differ = Object.keys(b).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
  assert.equal(
    differ.map((k) => [k, a[k]]),
    differ.map((k) => [k, b[k]]),
    `${label}: ${differ.join(', ')}`,
  );
  assert.equal(a, b, label);
}
