/**
 * The time that expiry decisions use. Code that decides whether a link, session or device code
 * has expired asks `clock.now()`, never the database's `now()`, so a test can move time forward
 * (`clock.now = () => later`) instead of sleeping.
 */
export const clock = { now: (): Date => new Date() };

/** `clock.now()` plus `ms` milliseconds. */
export function fromNow(ms: number): Date {
  return new Date(clock.now().getTime() + ms);
}
