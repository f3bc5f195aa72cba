/**
 * Runtime events off the response path: a server request's `runtime.*` events are queued here and
 * written in batches (every `flushMs`, at `maxBatch` queued events, and at shutdown), so a visitor's
 * answer never waits for an insert. A failed write keeps the batch for the next flush (bounded:
 * past `maxQueued` the oldest are dropped and the drop is logged); a batch the database refuses for
 * good is written event by event, and only an event refused alone is dropped (logged). Crash
 * safety (docs/decisions.md): a clean stop (SIGTERM, Ctrl-C) writes everything queued; a hard kill
 * can lose at most the events of the last `flushMs`.
 */
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { recordEvents, type NewEvent } from './record.ts';
import { refusedForGood } from '../db/pg-errors.ts';

export type EventWriter = ReturnType<typeof createEventWriter>;


export function createEventWriter(options: { db: Db; log: Logger; flushMs?: number; maxBatch?: number; maxQueued?: number }) {
  const flushMs = options.flushMs ?? 10;
  const maxBatch = options.maxBatch ?? 500;
  const maxQueued = options.maxQueued ?? 50_000;
  let queue: NewEvent[] = [];
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
        options.log.error('a runtime event was refused by the database and dropped', { app_id: event.app_id, type: event.type, code: (err as { code?: string }).code, error: String(err) });
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
          options.log.error('runtime events dropped: the database refuses them and the queue is full', { dropped });
        }
        options.log.warn('could not write runtime events; will retry', { queued: queue.length, error: String(err) });
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
      queue.push(...events);
      if (queue.length >= maxBatch) void flush();
      else schedule();
    },
    flush,
    queued: () => queue.length,
    /** Writes everything still queued (a shutdown). */
    async close(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (let i = 0; i < 3 && queue.length; i++) await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
