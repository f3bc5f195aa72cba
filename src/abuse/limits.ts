/**
 * Abuse limits every node shares: counters per window in Postgres, read as a sliding window. `hit()` counts one attempt
 * against a key and says whether the key is over its limit; over the limit the caller answers
 * 429 `abuse_throttled` with `Retry-After` (`throttled()`). Keys name what they count, e.g.
 * `email-request:addr:<e-mail>` or `app-login:ip:<app>:<address>`.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { clock } from '../lib/clock.ts';

export type Limit = { max: number; windowSeconds: number };

/** The limits, in one place; docs/decisions/sign-in-and-members.md lists them. */
export const LIMITS = {
  emailRequestPerAddress: { max: 5, windowSeconds: 900 },
  emailRequestPerClient: { max: 30, windowSeconds: 900 },
  emailConfirmPerClient: { max: 30, windowSeconds: 900 },
  signupPerClient: { max: 20, windowSeconds: 3600 },
  deviceStartPerClient: { max: 30, windowSeconds: 900 },
  devicePollPerClient: { max: 300, windowSeconds: 900 },
  userCodeMissesPerSession: { max: 10, windowSeconds: 900 },
  userCodeMissesPerClient: { max: 30, windowSeconds: 900 },
  invitationsPerAccount: { max: 50, windowSeconds: 86_400 },
  appLoginPerEmail: { max: 10, windowSeconds: 900 },
  appLoginPerClient: { max: 50, windowSeconds: 900 },
  appSignupPerClient: { max: 20, windowSeconds: 3600 },
  /** a burst of 100, then 50 a second on average */
  webhookPerApp: { max: 100, windowSeconds: 2 },
  /** Not a limit: counts rate-limited webhook deliveries, so an app's log gets one summary event a minute. */
  webhookThrottledSummary: { max: 1, windowSeconds: 60 },
} as const satisfies Record<string, Limit>;

/** `hits`: attempts in the current window, this one included; `previousHits`: in the window before. */
export type Hit = {
  limited: boolean;
  retryAfterSeconds: number;
  hits: number;
  previousHits: number;
};

/**
 * Counts one attempt for `key`; `limited` once the sliding-window estimate passes `limit.max`: the
 * current window's count plus the previous window's, weighted by how much of it still overlaps
 * (so a burst across a window boundary is counted, not reset).
 */
export async function hit(db: Executor, key: string, limit: Limit): Promise<Hit> {
  const w = windowOf(limit);
  // one round trip: count this attempt and read the previous window's count
  const { rows } = await sql<{ hits: number; previous: number | null }>`
    with counted as (
      insert into abuse_counters (key, window_start, hits, expires_at)
      values (${key}, ${w.start}, 1, ${new Date(w.start.getTime() + 2 * w.ms)})
      on conflict (key, window_start) do update set hits = abuse_counters.hits + 1
      returning hits)
    select counted.hits,
      (select p.hits from abuse_counters p where p.key = ${key} and p.window_start = ${new Date(w.start.getTime() - w.ms)}) as previous
    from counted`.execute(db);
  const row = rows[0]!;
  const estimate = row.hits + (row.previous ?? 0) * w.overlap;
  return {
    limited: estimate > limit.max,
    hits: row.hits,
    previousHits: row.previous ?? 0,
    retryAfterSeconds: w.retryAfterSeconds,
  };
}

type Window = { start: Date; ms: number; overlap: number; retryAfterSeconds: number };

function windowOf(limit: Limit): Window {
  const now = clock.now().getTime();
  const ms = limit.windowSeconds * 1000;
  const start = Math.floor(now / ms) * ms;
  return {
    start: new Date(start),
    ms,
    overlap: 1 - (now - start) / ms,
    retryAfterSeconds: Math.max(1, Math.ceil((start + ms - now) / 1000)),
  };
}

async function previousHits(db: Executor, key: string, w: Window): Promise<number> {
  const row = await db
    .selectFrom('abuse_counters')
    .select('hits')
    .where('key', '=', key)
    .where('window_start', '=', new Date(w.start.getTime() - w.ms))
    .executeTakeFirst();
  return row?.hits ?? 0;
}

/** The 429 for a key over its limit; the error handler turns `retry_after` into `Retry-After`. */
export function throttled(result: Hit, what: string): ApiError {
  return new ApiError(
    'abuse_throttled',
    `Too many ${what}; try again in ${result.retryAfterSeconds} seconds.`,
    { retry_after: result.retryAfterSeconds },
  );
}

/** Whether `key` is already at its limit, without counting an attempt (for limits on failures only). */
export async function peek(db: Executor, key: string, limit: Limit): Promise<Hit> {
  const w = windowOf(limit);
  const row = await db
    .selectFrom('abuse_counters')
    .select('hits')
    .where('key', '=', key)
    .where('window_start', '=', w.start)
    .executeTakeFirst();
  const hits = row?.hits ?? 0;
  const previous = await previousHits(db, key, w);
  const estimate = hits + previous * w.overlap;
  return {
    limited: estimate >= limit.max,
    hits,
    previousHits: previous,
    retryAfterSeconds: w.retryAfterSeconds,
  };
}

/** Counts an attempt against every key and throws 429 when any is over its limit. */
export async function enforce(
  db: Executor,
  what: string,
  checks: [key: string, limit: Limit][],
): Promise<void> {
  for (const [key, limit] of checks) {
    const result = await hit(db, key, limit);
    if (result.limited) throw throttled(result, what);
  }
}

/** Forgets counters whose window has passed (the retention job calls it). */
export async function pruneCounters(db: Executor): Promise<number> {
  const r = await db
    .deleteFrom('abuse_counters')
    .where('expires_at', '<', clock.now())
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
