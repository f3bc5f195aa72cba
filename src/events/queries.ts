import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Severity } from '../db/schema.ts';
import { containsPattern } from '../lib/like.ts';

export type EventFilter = {
  appId: string;
  type?: string;
  severity?: Severity;
  releaseId?: string;
  /** free text, matched case-insensitively in the message and the metadata's JSON */
  text?: string;
  beforeId?: number;
  limit: number;
};

/** Newest first by id (keyset), so a cursor pages through every event once even while new ones arrive. */
/** Free text in the message or anywhere in the metadata's JSON, case-insensitive. */
const textMatches = (text: string) => {
  const like = containsPattern(text);
  return sql<boolean>`(message ilike ${like} or metadata::text ilike ${like})`;
};

export async function listEvents(db: Executor, f: EventFilter) {
  let q = db.selectFrom('app_events').selectAll().where('app_id', '=', f.appId);
  if (f.type) q = q.where('type', '=', f.type);
  if (f.severity) q = q.where('severity', '=', f.severity);
  if (f.releaseId) q = q.where('release_id', '=', f.releaseId);
  if (f.text) q = q.where(textMatches(f.text));
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}
export type EventRow = Awaited<ReturnType<typeof listEvents>>[number];

/** The event types this app has in its (retained) log, with how many and the latest. */
export async function eventTypes(db: Executor, appId: string) {
  return db
    .selectFrom('app_events')
    .select([
      'type',
      (eb) => eb.fn.countAll<number>().as('count'),
      (eb) => eb.fn.max('created_at').as('last_at'),
    ])
    .where('app_id', '=', appId)
    .groupBy('type')
    .orderBy('type')
    .execute();
}

/**
 * Identical events grouped (same type, level and message), most recent group first: what an error
 * list shows as "this happened 312 times", with the latest occurrence to open.
 */
export async function eventGroups(
  db: Executor,
  appId: string,
  f: { type?: string; severity?: Severity; releaseId?: string; text?: string; limit: number },
) {
  let q = db
    .selectFrom('app_events')
    .select([
      'type',
      'severity',
      'message',
      (eb) => eb.fn.countAll<number>().as('count'),
      (eb) => eb.fn.min('created_at').as('first_at'),
      (eb) => eb.fn.max('created_at').as('last_at'),
      (eb) => eb.fn.max('id').as('last_id'),
    ])
    .where('app_id', '=', appId);
  if (f.type) q = q.where('type', '=', f.type);
  if (f.severity) q = q.where('severity', '=', f.severity);
  if (f.releaseId) q = q.where('release_id', '=', f.releaseId);
  if (f.text) q = q.where(textMatches(f.text));
  return q
    .groupBy(['type', 'severity', 'message'])
    .orderBy(sql`max(id)`, 'desc')
    .limit(f.limit)
    .execute();
}

export async function eventById(db: Executor, appId: string, id: number) {
  return db
    .selectFrom('app_events')
    .selectAll()
    .where('app_id', '=', appId)
    .where('id', '=', id)
    .executeTakeFirst();
}
