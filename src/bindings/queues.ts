/**
 * Workers Queues over Postgres (`queue_messages`) and graphile-worker: `send`/`sendBatch` store
 * messages, and one `queue_deliver` job per app queue (a job key) hands the consumer a batch when
 * it is full or its `max_batch_timeout` has passed. Delivery is at least once: a batch is taken
 * under a lease, and a message leaves only when the consumer's outcome says so (acknowledged, or
 * out of retries: to the dead letter queue when there is one, else dropped), so a worker that dies
 * mid-batch hands the same messages to the next delivery. Limits are Cloudflare's: a message of at
 * most 128 KB, a batch of at most 100 messages and 288 KB, a delay of at most 12 hours.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Bindings, QueueConsumerSettings } from './declared.ts';
import { planOf, upgradeFor } from '../plans/catalogue.ts';

export const QUEUE_LIMITS = {
  messageBytes: 128_000,
  batchMessages: 100,
  batchBytes: 288_000,
  maxDelaySeconds: 43_200,
} as const;

const CONTENT_TYPES = ['text', 'json', 'bytes', 'v8'] as const;
type ContentType = (typeof CONTENT_TYPES)[number];

export type QueueTarget = { appId: string; bindings: Bindings; planKey?: string };

type Outgoing = { contentType: ContentType; body: string; size: number; delay: number };

const refused = (message: string) => new ApiError('invalid_request', message);

function delayOf(raw: unknown, fallback: number): number {
  if (raw === undefined || raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > QUEUE_LIMITS.maxDelaySeconds)
    throw refused(
      `message delay ${String(raw)} is invalid: it must be a whole number of seconds from 0 to ${QUEUE_LIMITS.maxDelaySeconds}`,
    );
  return n;
}

/** One message as the guest encoded it: `{ contentType, body, size }` (size: its bytes as Workers count them). */
function outgoing(m: unknown, fallbackDelay: number): Outgoing {
  const o = (m && typeof m === 'object' ? m : {}) as Record<string, unknown>;
  const contentType = o.contentType as ContentType;
  if (!CONTENT_TYPES.includes(contentType))
    throw refused(
      `message content type ${String(o.contentType)} is invalid; if specified, must be one of 'text', 'json', 'bytes', or 'v8'`,
    );
  if (typeof o.body !== 'string') throw refused('a message body must be encoded');
  const size = Number(o.size);
  if (!Number.isInteger(size) || size < 0) throw refused('a message size must be counted');
  if (size > QUEUE_LIMITS.messageBytes)
    throw refused(`message length of ${size} bytes exceeds limit of ${QUEUE_LIMITS.messageBytes}`);
  return { contentType, body: o.body, size, delay: delayOf(o.delaySeconds, fallbackDelay) };
}

const messageId = () => randomBytes(16).toString('hex');

/** `env.QUEUE.send(body)` / `.sendBatch(messages)`: stores them and makes sure a delivery is due. */
export type SendResult = {
  metadata: {
    metrics: { backlogCount: number; backlogBytes: number; oldestMessageTimestamp?: number };
  };
};

export async function queueSend(
  deps: Deps,
  target: QueueTarget,
  binding: unknown,
  messages: unknown,
  options: unknown,
): Promise<SendResult> {
  const producer =
    typeof binding === 'string' && Object.hasOwn(target.bindings.producers, binding)
      ? target.bindings.producers[binding]!
      : undefined;
  if (!producer)
    throw new ApiError('not_available', `No queue producer is bound as ${String(binding)}.`);
  const list = Array.isArray(messages) ? messages : [];
  if (list.length > QUEUE_LIMITS.batchMessages)
    throw refused(
      `batch message count of ${list.length} exceeds limit of ${QUEUE_LIMITS.batchMessages}`,
    );
  const batchDelay = delayOf(
    (options as { delaySeconds?: unknown } | null)?.delaySeconds,
    producer.deliveryDelay,
  );
  const out = list.map((m) => outgoing(m, batchDelay));
  const bytes = out.reduce((n, m) => n + m.size, 0);
  if (out.length > 1 && bytes > QUEUE_LIMITS.batchBytes)
    throw refused(`batch size of ${bytes} bytes exceeds limit of ${QUEUE_LIMITS.batchBytes}`);
  if (!out.length) {
    const b = await queueState(deps.db, target.appId, producer.queue);
    return { metadata: { metrics: metricsOf(b) } };
  }
  return deps.db.transaction().execute(async (trx) => {
    const now = Date.now();
    await trx
      .insertInto('queue_messages')
      .values(
        out.map((m) => ({
          id: messageId(),
          app_id: target.appId,
          queue: producer.queue,
          content_type: m.contentType,
          body: m.body,
          size: m.size,
          visible_at: new Date(now + m.delay * 1000),
        })),
      )
      .execute();
    // one read of the queue, the new messages in it: the backlog's limit and figures, and when it is due
    await lockQueue(trx, target.appId, producer.queue);
    const state = await queueState(trx, target.appId, producer.queue);
    // messages waiting in one queue (ready, delayed or in flight), bounded by the plan
    const plan = planOf(deps.config.plans, target.planKey ?? 'free');
    const limit = plan.limits['queues.waiting.max'];
    if (state.n > limit)
      throw new ApiError(
        'quota_exceeded',
        `Queue ${producer.queue} holds ${(state.n - out.length).toLocaleString('en-US')} messages; ${plan.display_name} allows ${limit.toLocaleString('en-US')} waiting in one queue. Let the consumer catch up, or purge it.`,
        {
          metric: 'queues.waiting',
          plan_key: plan.key,
          limit,
          current: state.n - out.length,
          increment: out.length,
          upgrade_required: upgradeFor(deps.config.plans, plan, 'queues.waiting.max') !== null,
        },
      );
    const consumer = target.bindings.consumers[producer.queue];
    // a queue this release does not consume keeps its messages until a release that does
    if (consumer) await scheduleFrom(trx, target.appId, producer.queue, consumer, state);
    return { metadata: { metrics: metricsOf(state) } };
  });
}

type QueueState = {
  n: number;
  bytes: number;
  oldest: Date | null;
  visible: number;
  oldest_visible: Date | null;
  next: Date | null;
};

const metricsOf = (s: QueueState) => ({
  backlogCount: s.n,
  backlogBytes: s.bytes,
  oldestMessageTimestamp: (s.oldest ?? new Date()).getTime(),
});

/** Orders concurrent senders and deliveries of one queue (the due time only moves earlier). */
const lockQueue = (db: Executor, appId: string, queue: string) =>
  sql`select pg_advisory_xact_lock(hashtext(${jobKey(appId, queue)}))`.execute(db);

/** What one queue holds: its backlog, its visible ready messages, and when the next one shows. */
async function queueState(db: Executor, appId: string, queue: string): Promise<QueueState> {
  // a batch in flight comes back when its lease ends (its delivery died): that is due then too
  const { rows } = await sql<QueueState>`
    select count(*)::int as n, coalesce(sum(size), 0)::int as bytes, min(created_at) as oldest,
      count(*) filter (where state = 'ready' and visible_at <= now())::int as visible,
      min(visible_at) filter (where state = 'ready' and visible_at <= now()) as oldest_visible,
      least(min(visible_at) filter (where state = 'ready' and visible_at > now()),
        min(lease_until) filter (where state = 'inflight')) as next
    from queue_messages where app_id = ${appId} and queue = ${queue}`.execute(db);
  return rows[0]!;
}

const jobKey = (appId: string, queue: string) => `queue:${appId}:${queue}`;

/**
 * Makes the queue's delivery job due when its next batch is: now when a full batch is visible,
 * else `max_batch_timeout` after the oldest visible message, else when the next delayed one shows.
 * Never later than a delivery already due (the advisory lock orders concurrent senders).
 */
export async function scheduleDue(
  db: Executor,
  appId: string,
  queue: string,
  consumer: QueueConsumerSettings,
): Promise<void> {
  await lockQueue(db, appId, queue);
  await scheduleFrom(db, appId, queue, consumer, await queueState(db, appId, queue));
}

async function scheduleFrom(
  db: Executor,
  appId: string,
  queue: string,
  consumer: QueueConsumerSettings,
  r: QueueState,
): Promise<void> {
  const key = jobKey(appId, queue);
  let due: Date | null;
  if (r.visible >= consumer.maxBatchSize) due = new Date();
  else if (r.visible > 0)
    due = new Date(r.oldest_visible!.getTime() + consumer.maxBatchTimeout * 1000);
  else due = r.next;
  if (!due) return;
  await sql`select graphile_worker.add_job('queue_deliver',
      ${JSON.stringify({ app_id: appId, queue })}::json,
      run_at => least(${due}::timestamptz, coalesce(
        (select run_at from graphile_worker.jobs where key = ${key} and locked_at is null), ${due}::timestamptz)),
      job_key => ${key}, job_key_mode => 'replace', max_attempts => 5)`.execute(db);
}

export type TakenMessage = {
  id: string;
  timestamp: string;
  contentType: ContentType;
  body: string;
  attempts: number;
};

/**
 * Takes the next batch: visible ready messages, and in-flight ones whose lease ran out (their
 * delivery died), oldest first, each `attempts` counted up. Held until `leaseMs` from now.
 */
export async function takeBatch(
  db: Executor,
  appId: string,
  queue: string,
  size: number,
  leaseMs: number,
): Promise<TakenMessage[]> {
  const { rows } = await sql<{
    id: string;
    created_at: Date;
    content_type: ContentType;
    body: string;
    attempts: number;
  }>`update queue_messages set state = 'inflight', attempts = attempts + 1,
      lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    where id in (select id from queue_messages
      where app_id = ${appId} and queue = ${queue}
        and ((state = 'ready' and visible_at <= now()) or (state = 'inflight' and lease_until < now()))
      order by visible_at, created_at, id limit ${size} for update skip locked)
    returning id, created_at, content_type, body, attempts`.execute(db);
  return rows
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id))
    .map((r) => ({
      id: r.id,
      timestamp: r.created_at.toISOString(),
      contentType: r.content_type,
      body: r.body,
      attempts: r.attempts,
    }));
}

/** What the consumer's run decided: Workers' `MessageBatch` outcome. */
export type BatchOutcome = {
  outcome: 'ok' | 'exception';
  acks: string[];
  retries: Record<string, number | null>;
  ackAll: boolean;
  retryAll: { delaySeconds: number | null } | null;
};

export type Settled = { acked: number; retried: number; deadLettered: number; dropped: number };

/**
 * Applies a batch's outcome, as Workers do: an explicit ack holds (even when the handler threw);
 * otherwise a message retried by itself or by `retryAll`, or any message of a run that threw, goes
 * again after its delay, until `max_retries` retries: then to the dead letter queue, or dropped.
 */
export async function settleBatch(
  db: Executor,
  consumer: QueueConsumerSettings,
  taken: TakenMessage[],
  result: BatchOutcome,
): Promise<Settled> {
  const acks = new Set(result.acks);
  const done: string[] = [];
  const again: { id: string; delay: number }[] = [];
  const dead: string[] = [];
  for (const m of taken) {
    const retried = Object.hasOwn(result.retries, m.id);
    const retry =
      !acks.has(m.id) &&
      (retried || (!result.ackAll && (result.retryAll !== null || result.outcome !== 'ok')));
    if (!retry) done.push(m.id);
    else if (m.attempts > consumer.maxRetries) dead.push(m.id);
    else
      again.push({
        id: m.id,
        delay:
          (retried ? result.retries[m.id] : null) ??
          result.retryAll?.delaySeconds ??
          consumer.retryDelay,
      });
  }
  if (done.length) await db.deleteFrom('queue_messages').where('id', 'in', done).execute();
  for (const a of again)
    await sql`update queue_messages set state = 'ready', lease_until = null,
        visible_at = now() + make_interval(secs => ${a.delay}) where id = ${a.id}`.execute(db);
  const dlq = consumer.deadLetterQueue;
  if (dead.length && dlq)
    await sql`update queue_messages set queue = ${dlq}, dead_from = queue, state = 'ready', attempts = 0,
        lease_until = null, visible_at = now() where id in (${sql.join(dead)})`.execute(db);
  else if (dead.length) await db.deleteFrom('queue_messages').where('id', 'in', dead).execute();
  return {
    acked: done.length,
    retried: again.length,
    deadLettered: dlq ? dead.length : 0,
    dropped: dlq ? 0 : dead.length,
  };
}

/** A delivery of one of the app's queues now (the team retried its messages). */
export async function wakeQueue(db: Executor, appId: string, queue: string): Promise<void> {
  await sql`select graphile_worker.add_job('queue_deliver',
      ${JSON.stringify({ app_id: appId, queue })}::json,
      job_key => ${jobKey(appId, queue)}, job_key_mode => 'replace', max_attempts => 5)`.execute(
    db,
  );
}

/**
 * A delivery now for each of the app's queues that holds messages (a release just went live: it may
 * consume a queue the last one did not). The delivery finds out whether it does.
 */
export async function wakeQueues(db: Executor, appId: string): Promise<void> {
  await sql`select graphile_worker.add_job('queue_deliver',
      json_build_object('app_id', ${appId}::text, 'queue', q.queue),
      job_key => 'queue:' || ${appId}::text || ':' || q.queue, job_key_mode => 'replace', max_attempts => 5)
    from (select distinct queue from queue_messages where app_id = ${appId}) q`.execute(db);
}
