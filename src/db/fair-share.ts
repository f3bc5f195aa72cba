/**
 * Fair shares of the database for app code. Every platform call app code makes (ctx.data, ctx.files,
 * ctx.jobs) takes a turn here before it touches Postgres: app calls together hold at most the pool
 * less a reserve, so the platform's own work (health, sign-in, publish, the job worker's bookkeeping)
 * always finds a connection; one app holds at most half of the apps' part and one account three
 * quarters; and a freed turn goes to the waiting apps in rotation, so a flood of one app's calls
 * waits behind its own calls, not in front of everyone else's (pg-pool's own queue is one line).
 * A call that would wait past its server call's wall-clock limit is refused instead.
 */
import type pg from 'pg';
import { ApiError } from '../errors.ts';

type Waiter = {
  appId: string;
  accountId: string;
  grant: () => void;
  timer: ReturnType<typeof setTimeout> | undefined;
};

export type ShareLimits = { capacity: number; perApp: number; perAccount: number; reserve: number };

/** The shares of a pool of `max` connections. */
export function shareLimits(max: number): ShareLimits {
  const reserve = Math.min(max - 1, Math.max(2, Math.round(max * 0.2)));
  const capacity = Math.max(1, max - reserve);
  return {
    reserve,
    capacity,
    perApp: Math.max(1, Math.ceil(capacity / 2)),
    perAccount: Math.max(1, Math.ceil((capacity * 3) / 4)),
  };
}

export class DbShares {
  readonly limits: ShareLimits;
  private inFlight = 0;
  private byApp = new Map<string, number>();
  private byAccount = new Map<string, number>();
  /** waiting calls by app, and the apps with waiters in the order they take turns */
  private queues = new Map<string, Waiter[]>();
  private rotation: string[] = [];
  /** how long calls waited, ms, and how many were refused (for the operator) */
  readonly stats = { granted: 0, waited: 0, waitedMs: 0, refused: 0 };

  constructor(limits: ShareLimits) {
    this.limits = limits;
  }

  running(): number {
    return this.inFlight;
  }

  waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  private fits(appId: string, accountId: string): boolean {
    return (
      this.inFlight < this.limits.capacity &&
      (this.byApp.get(appId) ?? 0) < this.limits.perApp &&
      (this.byAccount.get(accountId) ?? 0) < this.limits.perAccount
    );
  }

  private take(appId: string, accountId: string): () => void {
    this.inFlight++;
    this.byApp.set(appId, (this.byApp.get(appId) ?? 0) + 1);
    this.byAccount.set(accountId, (this.byAccount.get(accountId) ?? 0) + 1);
    this.stats.granted++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight--;
      const a = this.byApp.get(appId)! - 1;
      if (a) this.byApp.set(appId, a);
      else this.byApp.delete(appId);
      const b = this.byAccount.get(accountId)! - 1;
      if (b) this.byAccount.set(accountId, b);
      else this.byAccount.delete(accountId);
      this.next();
    };
  }

  /** Hands freed turns to waiting apps in rotation, skipping those at their own or their account's share. */
  private next(): void {
    for (let tried = 0; tried < this.rotation.length && this.inFlight < this.limits.capacity; ) {
      const appId = this.rotation.shift()!;
      const queue = this.queues.get(appId)!;
      const w = queue[0]!;
      if (!this.fits(w.appId, w.accountId)) {
        this.rotation.push(appId);
        tried++;
        continue;
      }
      queue.shift();
      if (queue.length) this.rotation.push(appId);
      else this.queues.delete(appId);
      tried = 0;
      w.grant();
    }
  }

  /**
   * Waits for a turn for one platform call of `appId`; the answer frees it. Refused with
   * `service_unavailable` when no turn comes before `deadline` (performance.now() ms).
   */
  async acquire(appId: string, accountId: string, deadline: number): Promise<() => void> {
    if (!this.queues.has(appId) && this.fits(appId, accountId)) return this.take(appId, accountId);
    const began = performance.now();
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        appId,
        accountId,
        timer: undefined,
        grant: () => {
          clearTimeout(w.timer);
          this.stats.waited++;
          this.stats.waitedMs += performance.now() - began;
          resolve(this.take(appId, accountId));
        },
      };
      const queue = this.queues.get(appId);
      if (queue) queue.push(w);
      else {
        this.queues.set(appId, [w]);
        this.rotation.push(appId);
      }
      w.timer = setTimeout(
        () => {
          const q = this.queues.get(appId);
          const i = q?.indexOf(w) ?? -1;
          if (i < 0) return;
          q!.splice(i, 1);
          if (!q!.length) {
            this.queues.delete(appId);
            this.rotation.splice(this.rotation.indexOf(appId), 1);
          }
          this.stats.refused++;
          reject(
            new ApiError(
              'service_unavailable',
              `The database is busy with this app's other platform calls: this one waited ${Math.round(performance.now() - began)} ms, until the end of the call's time. Make fewer at once.`,
            ),
          );
        },
        Math.max(0, deadline - performance.now()),
      );
      this.next();
    });
  }
}

const shares = new WeakMap<pg.Pool, DbShares>();

/** The shares of this process's pool (one per pool: tests may run several services in a process). */
export function sharesOf(pool: pg.Pool): DbShares {
  let s = shares.get(pool);
  if (!s) {
    const max = (pool as unknown as { options: { max?: number } }).options.max ?? 10;
    shares.set(pool, (s = new DbShares(shareLimits(max))));
  }
  return s;
}
