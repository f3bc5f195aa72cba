/**
 * Request bodies held for app code at once. A server call's body (up to 10 MiB) is read whole before
 * the call and held, in a few copies, until the call has it: 80 visitors posting 10 MiB each at once
 * took the process from 282 MiB to 2.5 GiB (measured), and nothing bounded how many came. So bodies
 * in flight are bounded, for the process and for each app; a request whose body does not fit is
 * answered 503 with `Retry-After` (before a byte of it is read when it declares its length), and
 * other apps' visitors keep their room. A body with a declared `Content-Length` takes that room at
 * once; one without (chunked) takes room as its bytes arrive. The room is given back when the call
 * has the body.
 */

/** The process's room (a body is held in about four copies on its way: ~0.6 GiB at most), and one app's: three 10 MiB bodies at once (an app instance holds 64 MiB in all). */
export const BODY_BUDGET = { totalBytes: 128 * 1024 * 1024, perAppBytes: 32 * 1024 * 1024 } as const;

/** Room held for one body: `hold` changes it to `bytes` (false, and unchanged, when more does not fit); `release` gives it all back. */
export type BodyRoom = { hold(bytes: number): boolean; release(): void };

export type BodyBudget = { take(appId: string, bytes: number): BodyRoom | undefined };

export function createBodyBudget(limits: { totalBytes: number; perAppBytes: number } = BODY_BUDGET): BodyBudget {
  let used = 0;
  const byApp = new Map<string, number>();
  /** Adds `n` (negative to give back) to the process's and the app's use when it fits. */
  const add = (appId: string, n: number): boolean => {
    const mine = byApp.get(appId) ?? 0;
    if (n > 0 && (used + n > limits.totalBytes || mine + n > limits.perAppBytes)) return false;
    used += n;
    if (mine + n > 0) byApp.set(appId, mine + n);
    else byApp.delete(appId);
    return true;
  };
  return {
    take(appId, bytes) {
      if (!add(appId, bytes)) return undefined;
      let held = bytes;
      return {
        hold(n) {
          if (!add(appId, n - held)) return false;
          held = n;
          return true;
        },
        release() {
          add(appId, -held);
          held = 0;
        },
      };
    },
  };
}
