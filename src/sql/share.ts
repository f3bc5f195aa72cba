/**
 * How much of this node's thread one app's SQL may take. SQLite runs on the service's thread
 * (docs/decisions/sql.md), so without a bound one app sending query after slow query would hold it
 * for everyone: each app has a bucket of SQL time that refills at SHARE of real time, up to BURST,
 * and a call that finds it empty waits for it to refill (its own wall-clock limit still applies).
 */

/** The part of real time one app's SQL may use, over time. */
export const SHARE = 0.25;
/** What an idle app may spend at once (a call's budget is 500 ms). */
const BURST_MS = 500;

const buckets = new Map<string, { ms: number; at: number }>();

function level(appId: string, now: number): { ms: number; at: number } {
  const b = buckets.get(appId) ?? { ms: BURST_MS, at: now };
  b.ms = Math.min(BURST_MS, b.ms + (now - b.at) * SHARE);
  b.at = now;
  buckets.set(appId, b);
  // a node serving many apps keeps only the ones that are not full
  if (buckets.size > 10_000) for (const [k, v] of buckets) if (v.ms >= BURST_MS) buckets.delete(k);
  return b;
}

/** Resolves once the app may run SQL again (at once when its bucket holds any time). */
export async function waitForShare(appId: string): Promise<void> {
  for (;;) {
    const b = level(appId, performance.now());
    if (b.ms > 0) return;
    await new Promise((r) => setTimeout(r, Math.ceil(-b.ms / SHARE) + 1));
  }
}

/** Charges what a call's SQL took. */
export function chargeShare(appId: string, ms: number): void {
  level(appId, performance.now()).ms -= ms;
}
