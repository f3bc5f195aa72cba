/**
 * A queue's messages as the team sees them (the console's Storage tab, `platform queues messages`):
 * each waiting, delayed or in-flight message with its attempts and a preview of its body, and the
 * retry a person asks for: a delayed message goes now, a dead letter goes back to the queue it
 * failed in with its attempts reset. Purging is in overview.ts.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { wakeQueue } from './queues.ts';

const PREVIEW_CHARS = 1000;

export type QueueMessageRow = {
  id: string;
  state: 'ready' | 'delayed' | 'in_flight';
  content_type: 'text' | 'json' | 'bytes' | 'v8';
  size: number;
  attempts: number;
  /** text and json bodies, cut to 1,000 characters; null for bytes and v8 */
  preview: string | null;
  sent_at: string;
  visible_at: string;
  dead_lettered_from: string | null;
};

const cursorOf = (at: Date, id: string) =>
  Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');

function parseCursor(cursor: string | undefined): { at: Date; id: string } | undefined {
  if (!cursor) return undefined;
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const when = new Date(at ?? '');
  if (!id || Number.isNaN(when.getTime()))
    throw new ApiError('invalid_request', 'cursor is not one this list gave');
  return { at: when, id };
}

/** A page of the queue's messages, oldest first. */
export async function listQueueMessages(
  deps: Deps,
  appId: string,
  queue: string,
  options: { cursor?: string; limit?: number },
): Promise<{ messages: QueueMessageRow[]; cursor: string | null }> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 100);
  const after = parseCursor(options.cursor);
  let q = deps.db
    .selectFrom('queue_messages')
    .select([
      'id',
      'state',
      'content_type',
      'size',
      'attempts',
      'created_at',
      'visible_at',
      'dead_from',
      sql<string>`left(body, ${PREVIEW_CHARS})`.as('preview'),
      sql<boolean>`visible_at > now()`.as('later'),
    ])
    .where('app_id', '=', appId)
    .where('queue', '=', queue)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1);
  if (after) q = q.where(sql<boolean>`(created_at, id) > (${after.at}::timestamptz, ${after.id})`);
  const rows = await q.execute();
  const page = rows.slice(0, limit);
  return {
    messages: page.map((r) => ({
      id: r.id,
      state: r.state === 'inflight' ? 'in_flight' : r.later ? 'delayed' : 'ready',
      content_type: r.content_type,
      size: r.size,
      attempts: r.attempts,
      preview: r.content_type === 'text' || r.content_type === 'json' ? r.preview : null,
      sent_at: r.created_at.toISOString(),
      visible_at: r.visible_at.toISOString(),
      dead_lettered_from: r.dead_from,
    })),
    cursor: rows.length > limit ? cursorOf(page.at(-1)!.created_at, page.at(-1)!.id) : null,
  };
}

/**
 * Retries the queue's waiting messages (those named, or all): a dead letter goes back to the
 * queue it failed in, attempts reset; any other is made visible now. A message a delivery holds
 * is left to it. Each queue that got one is delivered now.
 */
export async function retryQueueMessages(
  deps: Deps,
  appId: string,
  queue: string,
  ids: string[] | undefined,
): Promise<{ retried: number; returned: number }> {
  return deps.db.transaction().execute(async (trx) => {
    let q = trx
      .updateTable('queue_messages')
      .set({
        queue: sql`coalesce(dead_from, queue)`,
        attempts: sql`case when dead_from is null then attempts else 0 end`,
        dead_from: null,
        visible_at: sql`now()`,
      })
      .where('app_id', '=', appId)
      .where('queue', '=', queue)
      .where('state', '=', 'ready');
    if (ids) q = q.where('id', 'in', ids.length ? ids : ['']);
    // `returning` sees the new row: a returned one now names its old queue
    const rows = await q.returning(['queue']).execute();
    const returned = rows.filter((r) => r.queue !== queue).length;
    for (const name of new Set(rows.map((r) => r.queue))) await wakeQueue(trx, appId, name);
    return { retried: rows.length, returned };
  });
}
