/**
 * Request bodies held for app code at once. A server call's body (up to 10 MiB) is read whole before
 * the call and held, in a few copies, until the call has it: 80 visitors posting 10 MiB each at once
 * took the process from 282 MiB to 2.5 GiB (measured), and nothing bounded how many came. So bodies
 * in flight are bounded, for the process and for each app; a request whose body does not fit is
 * answered 503 with `Retry-After` before a byte of it is read, and other apps' visitors keep their
 * room. A reservation is the declared `Content-Length` (or the whole 10 MiB when none is declared,
 * cut to what came once it is read), released when the call has the body.
 */
/** The process's room (a body is held in about four copies on its way: ~0.6 GiB at most), and one app's: three 10 MiB bodies at once (an app instance holds 64 MiB in all). */
export const BODY_BUDGET = { totalBytes: 128 * 1024 * 1024, perAppBytes: 32 * 1024 * 1024 } as const;

/** Room taken for one body: `resize` to what really came, `release` once the call has it (idempotent). */
export type BodyRoom = { resize(bytes: number): void; release(): void };

export type BodyBudget = { take(appId: string, bytes: number): BodyRoom | undefined };

export function createBodyBudget(limits: { totalBytes: number; perAppBytes: number } = BODY_BUDGET): BodyBudget {
  let used = 0;
  const byApp = new Map<string, number>();
  const add = (appId: string, n: number) => {
    used += n;
    const left = (byApp.get(appId) ?? 0) + n;
    if (left > 0) byApp.set(appId, left);
    else byApp.delete(appId);
  };
  return {
    take(appId, bytes) {
      if (used + bytes > limits.totalBytes || (byApp.get(appId) ?? 0) + bytes > limits.perAppBytes) return undefined;
      add(appId, bytes);
      let held = bytes;
      return {
        resize(n) {
          if (held === 0 || n >= held) return;
          add(appId, n - held);
          held = n;
        },
        release() {
          add(appId, -held);
          held = 0;
        },
      };
    },
  };
}
