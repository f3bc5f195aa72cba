/**
 * Runtime events off the response path: a server request's `runtime.*` events are queued here and
 * written in batches (every `flushMs`, at `maxBatch` queued events, and at shutdown), so a visitor's
 * answer never waits for an insert. A failed write keeps the batch for the next flush (bounded:
 * past `maxQueued` the oldest are dropped and the drop is logged); a batch the database refuses for
 * good is written event by event, and only an event refused alone is dropped (logged). Crash
 * safety (docs/decisions/origin.md): a clean stop (SIGTERM, Ctrl-C) writes everything queued; a hard kill
 * can lose at most the events of the last `flushMs`.
 *
 * Each app has an allowance (`perApp`: a burst, refilled at a rate per second, on this node): app
 * code may log 200 lines per call, so one app could otherwise put tens of thousands of rows a second
 * on the shared database and fill this queue for everyone. Past it an app's events are dropped and
 * counted, and the app gets one `runtime.log.warn` saying how many, a second after the first drop
 * and then at most once a minute.
 */
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { recordEvents, type NewEvent } from './record.ts';
import { refusedForGood } from '../db/pg-errors.ts';

export type EventWriter = ReturnType<typeof createEventWriter>;

/** Runtime events an app may write per node: a burst of 2,000, refilled at 200 a second. */
export const EVENTS_PER_APP = { burst: 2000, perSecond: 200 } as const;
const SUMMARY_AFTER_MS = 1000;
const SUMMARY_EVERY_MS = 60_000;

type Allowance = {
  tokens: number;
  at: number;
  dropped: number;
  firstDropAt: number;
  lastSummaryAt: number;
  accountId: string;
  releaseId: string | null | undefined;
};

export function createEventWriter(options: {
  db: Db;
  log: Logger;
  flushMs?: number;
  maxBatch?: number;
  maxQueued?: number;
  perApp?: { burst: number; perSecond: number };
}) {
  const flushMs = options.flushMs ?? 10;
  const maxBatch = options.maxBatch ?? 500;
  const maxQueued = options.maxQueued ?? 50_000;
  const perApp = options.perApp ?? EVENTS_PER_APP;
  const queue: NewEvent[] = [];
  const allowances = new Map<string, Allowance>();
  let summaryTimer: ReturnType<typeof setTimeout> | undefined;

  /** Whether the app may write one more event now (refilling its allowance first). */
  function allowed(e: NewEvent, now: number): boolean {
    const id = e.app_id;
    if (!id) return true;
    let a = allowances.get(id);
    if (!a) {
      // forget apps whose allowance is full and that have nothing to report
      if (allowances.size >= 10_000)
        for (const [k, v] of allowances)
          if (!v.dropped && v.tokens + ((now - v.at) / 1000) * perApp.perSecond >= perApp.burst)
            allowances.delete(k);
      allowances.set(
        id,
        (a = {
          tokens: perApp.burst,
          at: now,
          dropped: 0,
          firstDropAt: 0,
          lastSummaryAt: 0,
          accountId: e.account_id,
          releaseId: e.release_id,
        }),
      );
    }
    a.tokens = Math.min(perApp.burst, a.tokens + ((now - a.at) / 1000) * perApp.perSecond);
    a.at = now;
    if (a.tokens >= 1) {
      a.tokens -= 1;
      return true;
    }
    if (!a.dropped) a.firstDropAt = now;
    a.dropped++;
    a.releaseId = e.release_id;
    scheduleSummaries(now);
    return false;
  }

  /** When an app's next summary is due: a second after its first drop, and a minute after its last summary. */
  const dueAt = (a: Allowance) =>
    Math.max(a.firstDropAt + SUMMARY_AFTER_MS, a.lastSummaryAt + SUMMARY_EVERY_MS);

  function scheduleSummaries(now: number): void {
    if (summaryTimer) return;
    let next = Infinity;
    for (const a of allowances.values()) if (a.dropped) next = Math.min(next, dueAt(a));
    if (next === Infinity) return;
    summaryTimer = setTimeout(
      () => {
        summaryTimer = undefined;
        summarise(Date.now());
      },
      Math.max(0, next - now),
    );
    summaryTimer.unref?.();
  }

  /** Queues one warning per app whose drops are due to be reported (`all`: every app's, at shutdown, with no timer after). */
  function summarise(now: number, all = false): void {
    const events: NewEvent[] = [];
    for (const [appId, a] of allowances) {
      if (!a.dropped || (!all && dueAt(a) > now)) continue;
      events.push({
        app_id: appId,
        account_id: a.accountId,
        release_id: a.releaseId ?? null,
        type: 'runtime.log.warn',
        severity: 'warn',
        message: `${a.dropped.toLocaleString('en-US')} log lines and runtime events of this app were dropped: it wrote more than ${perApp.perSecond} a second (bursts of up to ${perApp.burst.toLocaleString('en-US')} are kept).`,
        metadata: { dropped: a.dropped, per_second: perApp.perSecond, burst: perApp.burst },
      });
      a.dropped = 0;
      a.lastSummaryAt = now;
    }
    if (events.length) {
      queue.push(...events);
      schedule();
    }
    if (!all) scheduleSummaries(now);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();

  function schedule(): void {
    if (timer || !queue.length) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, flushMs);
  }

  /**
   * After a batch was refused for good: each event alone, so one the database can never take
   * (a data or constraint error) is dropped, logged, instead of holding back every event behind it.
   * An error of another kind (the database is away) stops here; what was written is off the queue.
   */
  async function writeOneByOne(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const event = queue[0]!;
      try {
        await recordEvents(options.db, [event]);
      } catch (err) {
        if (!refusedForGood(err)) throw err;
        options.log.error('a runtime event was refused by the database and dropped', {
          app_id: event.app_id,
          type: event.type,
          code: (err as { code?: string }).code,
          error: String(err),
        });
      }
      queue.shift();
    }
  }

  /** Writes the first `count` queued events and takes them off the queue; throws (queue kept) when the database is away. */
  async function writeBatch(count: number): Promise<void> {
    try {
      await recordEvents(options.db, queue.slice(0, count));
      queue.splice(0, count);
    } catch (err) {
      if (!refusedForGood(err)) throw err;
      await writeOneByOne(count);
    }
  }

  async function writeOnce(): Promise<void> {
    while (queue.length) {
      try {
        await writeBatch(Math.min(maxBatch, queue.length));
      } catch (err) {
        if (queue.length > maxQueued) {
          const dropped = queue.length - maxQueued;
          queue.splice(0, dropped);
          options.log.error(
            'runtime events dropped: the database refuses them and the queue is full',
            { dropped },
          );
        }
        options.log.warn('could not write runtime events; will retry', {
          queued: queue.length,
          error: String(err),
        });
        return;
      }
    }
  }

  /** Writes what is queued (one writer at a time; a caller during a write waits for the next). */
  function flush(): Promise<void> {
    writing = writing.then(writeOnce);
    return writing.finally(schedule);
  }

  return {
    /** Queues events; never waits and never throws. */
    add(events: NewEvent[]): void {
      if (!events.length) return;
      const now = Date.now();
      for (const e of events) if (allowed(e, now)) queue.push(e);
      if (queue.length >= maxBatch) void flush();
      else schedule();
    },
    /**
     * The events within their apps' allowances, for a caller that writes them itself (a job's log
     * lines, written with its outcome); the rest are counted as dropped like those given to `add`.
     */
    admit(events: NewEvent[]): NewEvent[] {
      const now = Date.now();
      return events.filter((e) => allowed(e, now));
    },
    flush,
    queued: () => queue.length,
    /** Writes everything still queued (a shutdown). */
    async close(): Promise<void> {
      if (summaryTimer) clearTimeout(summaryTimer);
      summaryTimer = undefined;
      summarise(Date.now(), true);
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (let i = 0; i < 3 && queue.length; i++) await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
