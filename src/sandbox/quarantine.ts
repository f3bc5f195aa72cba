/**
 * The pool's record of releases that keep killing their worker (out of memory, stack or time): pure
 * bookkeeping over the clock it is given, so it is tested without threads. The pool spawns and
 * terminates the workers it decides on.
 */

/**
 * A release that kills its worker this often is quarantined: it gets a worker of its own for
 * `forMs` (it keeps serving, and its crashes no longer touch other apps' calls), or, when
 * `maxIsolated` releases already have one, its calls are refused for `cooldownMs`.
 */
export const QUARANTINE = {
  kills: 3,
  withinMs: 60_000,
  forMs: 600_000,
  cooldownMs: 60_000,
  maxIsolated: 2,
};
export type Quarantine = { mode: 'own_worker' | 'refused'; seconds: number };

/** Releases whose kills are remembered at most (the oldest is forgotten first). */
const MAX_REMEMBERED = 10_000;

export class QuarantineBook<W> {
  private kills = new Map<string, number[]>();
  private refusedUntil = new Map<string, number>();
  private isolated = new Map<string, { worker: W; until: number }>();

  /**
   * Counts a worker kill against a release at `now`; the quarantine it starts, if this kill is one
   * too many. `ownWorker` makes the release's own worker when it gets one.
   */
  killed(releaseId: string, now: number, ownWorker: () => W): Quarantine | undefined {
    if (this.isolated.has(releaseId)) return undefined; // already alone: it only hurts itself
    const recent = (this.kills.get(releaseId) ?? []).filter((t) => now - t < QUARANTINE.withinMs);
    recent.push(now);
    this.kills.set(releaseId, recent);
    if (this.kills.size > MAX_REMEMBERED) this.kills.delete(this.kills.keys().next().value!);
    if (recent.length < QUARANTINE.kills) return undefined;
    this.kills.delete(releaseId);
    if (this.isolated.size < QUARANTINE.maxIsolated) {
      this.isolated.set(releaseId, { worker: ownWorker(), until: now + QUARANTINE.forMs });
      return { mode: 'own_worker', seconds: QUARANTINE.forMs / 1000 };
    }
    this.refusedUntil.set(releaseId, now + QUARANTINE.cooldownMs);
    return { mode: 'refused', seconds: QUARANTINE.cooldownMs / 1000 };
  }

  /** Seconds the release's calls are still refused for (0: not refused). */
  refusedFor(releaseId: string, now: number): number {
    const until = this.refusedUntil.get(releaseId);
    if (until === undefined) return 0;
    if (until > now) return Math.ceil((until - now) / 1000);
    this.refusedUntil.delete(releaseId);
    return 0;
  }

  /**
   * The release's own worker while its quarantine lasts (or while `busy` says the worker still has
   * calls). When it is over, `released` gets the worker to stop and undefined is returned: the
   * release goes back to the shared workers.
   */
  ownWorker(
    releaseId: string,
    now: number,
    busy: (worker: W) => boolean,
    released: (worker: W) => void,
  ): W | undefined {
    const own = this.isolated.get(releaseId);
    if (!own) return undefined;
    if (own.until > now || busy(own.worker)) return own.worker;
    this.isolated.delete(releaseId);
    released(own.worker);
    return undefined;
  }

  /** The release's own worker, if it has one now (whether or not its time is over). */
  worker(releaseId: string): W | undefined {
    return this.isolated.get(releaseId)?.worker;
  }

  /** Every quarantined release's own worker. */
  workers(): W[] {
    return [...this.isolated.values()].map((i) => i.worker);
  }

  /** Replaces a quarantined release's worker (its old one died). */
  replace(releaseId: string, worker: W): void {
    const own = this.isolated.get(releaseId);
    if (own) own.worker = worker;
  }

  has(releaseId: string): boolean {
    return this.isolated.has(releaseId);
  }
}
