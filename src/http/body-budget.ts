/**
 * Room for large request bodies held at once, for the process and for each owner (an app for server
 * calls, an account for publishes). A server call's body (up to 10 MiB) is read whole before the call
 * and held, in a few copies, until the call has it: 80 visitors posting 10 MiB each at once took the
 * process from 282 MiB to 2.5 GiB (measured), and nothing bounded how many came; a publish body (up to
 * ~141 MB) is held, decoded, while it is stored. A request whose body does not fit is answered 503
 * with `Retry-After` (before a byte of it is read when it declares its length), and other owners keep
 * their room. A body with a declared `Content-Length` takes that room at once; one without (chunked)
 * takes room as its bytes arrive. The room is given back when the work with the body is done.
 */

/** Server calls: the process's room (a body is held in about four copies on its way: ~0.6 GiB at most), and one app's: three 10 MiB bodies at once (an app instance holds 64 MiB in all). */
export const BODY_BUDGET = {
  totalBytes: 128 * 1024 * 1024,
  perOwnerBytes: 32 * 1024 * 1024,
} as const;

/** Publishes: two of the largest at once in the process (one publish held ~0.3-0.5 GiB at its peak, measured), one per account. */
export const PUBLISH_BODY_BUDGET = {
  totalBytes: 320 * 1024 * 1024,
  perOwnerBytes: 160 * 1024 * 1024,
} as const;

/** Room held for one body: `hold` changes it to `bytes` (false, and unchanged, when more does not fit); `release` gives it all back. */
export type BodyRoom = { hold(bytes: number): boolean; release(): void };

export type BodyBudget = {
  take(owner: string, bytes: number): BodyRoom | undefined;
  /** Bytes of room `owner` holds now. */
  heldBy(owner: string): number;
};

export function createBodyBudget(
  limits: { totalBytes: number; perOwnerBytes: number } = BODY_BUDGET,
): BodyBudget {
  let used = 0;
  const byOwner = new Map<string, number>();
  /** Adds `n` (negative to give back) to the process's and the owner's use when it fits. */
  const add = (owner: string, n: number): boolean => {
    const mine = byOwner.get(owner) ?? 0;
    if (n > 0 && (used + n > limits.totalBytes || mine + n > limits.perOwnerBytes)) return false;
    used += n;
    if (mine + n > 0) byOwner.set(owner, mine + n);
    else byOwner.delete(owner);
    return true;
  };
  return {
    heldBy: (owner) => byOwner.get(owner) ?? 0,
    take(owner, bytes) {
      if (!add(owner, bytes)) return undefined;
      let held = bytes;
      return {
        hold(n) {
          if (!add(owner, n - held)) return false;
          held = n;
          return true;
        },
        release() {
          add(owner, -held);
          held = 0;
        },
      };
    },
  };
}

/**
 * Room in `budget` for one request body: a declared length (`Content-Length`, at most `maxBytes`) is
 * taken at once; without one the body takes room as it arrives, through `arrived` (for `readLimited`),
 * which throws `full()` when more does not fit. Undefined when the declared room is not there.
 */
export function roomFor(
  budget: BodyBudget,
  owner: string,
  contentLength: string | null,
  maxBytes: number,
  full: () => Error,
): { room: BodyRoom; arrived(size: number): void } | undefined {
  const declared = Number(contentLength ?? Number.NaN);
  const known = Number.isSafeInteger(declared) && declared >= 0;
  const room = budget.take(owner, known ? Math.min(declared, maxBytes) : 0);
  if (!room) return undefined;
  return {
    room,
    arrived(size) {
      if (!room.hold(Math.max(size, known ? declared : 0))) throw full();
    },
  };
}
