/**
 * `queue_deliver` (one job per app queue, by job key): hands the live release's `queue(batch, env,
 * ctx)` handler the next batch (src/bindings/queues.ts), applies what it decided, and makes the
 * next delivery due. A queue the live release does not consume, an unpublished or blocked app, or a
 * module without a queue handler leaves the messages waiting (event `queue.blocked`): they are
 * delivered once a release that consumes the queue goes live.
 */
import type { Task } from 'graphile-worker';
import * as v from 'valibot';
import { appOrigin } from '../../src/apps/mappers.ts';
import {
  type BatchOutcome,
  scheduleDue,
  settleBatch,
  takeBatch,
} from '../../src/bindings/queues.ts';
import type { Deps } from '../../src/deps.ts';
import { recordEvents } from '../../src/events/record.ts';
import { servingBlock } from '../../src/releases/live.ts';
import { appPointer } from '../../src/releases/queries.ts';
import { invokeRelease } from '../../src/runtime/invoke.ts';
import { logEvents } from '../../src/runtime/log-events.ts';
import type { NodeRuntime } from '../../src/runtime/node-runtime.ts';

const Payload = v.object({ app_id: v.string(), queue: v.string() });

const Outcome = v.object({
  outcome: v.picklist(['ok', 'exception']),
  acks: v.array(v.string()),
  retries: v.record(v.string(), v.nullable(v.number())),
  ackAll: v.boolean(),
  retryAll: v.nullable(v.object({ delaySeconds: v.nullable(v.number()) })),
  error: v.optional(v.nullable(v.string())),
  stack: v.optional(v.nullable(v.string())),
});

export function queueDeliverTask(deps: Deps, runtime: NodeRuntime): Task {
  return async (raw, helpers) => {
    const parsed = v.safeParse(Payload, raw);
    if (!parsed.success) return;
    const { app_id: appId, queue } = parsed.output;
    const app = await appPointer(deps.db, appId);
    if (!app) return;
    const base = { app_id: app.id, account_id: app.account_id, release_id: app.live_release_id };
    const blocked = (reason: string) =>
      recordEvents(deps.db, [
        {
          ...base,
          type: 'queue.blocked',
          severity: 'warn',
          message: `Queue ${queue} is not delivered: ${reason}; its messages wait.`,
          metadata: { queue, reason },
        },
      ]);
    if (!app.live_release_id || app.deleted_at) return blocked('the app is not published');
    if (servingBlock(app)) return blocked('the app is blocked');
    const release = await runtime.caches.release(app.live_release_id);
    const consumer = release?.bindings.consumers[queue];
    if (!release || !consumer || !release.manifest.runtime.server_entry)
      return blocked('the live release does not consume this queue');
    const leaseMs = deps.config.sandbox.backgroundWallMs + 30_000;
    const taken = await takeBatch(deps.db, appId, queue, consumer.maxBatchSize, leaseMs);
    if (taken.length) {
      const result = await invokeRelease(deps, runtime, {
        handler: 'queue',
        app: { appId: app.id, accountId: app.account_id, planKey: app.plan_key },
        release,
        event: JSON.stringify({ queue, messages: taken }),
        request: {
          method: 'POST',
          url: `${appOrigin(deps.config, app.id)}/_platform/queues/${queue}`,
          headers: [],
        },
      });
      if (!result.ok && result.error?.kind === 'no-handler') {
        // the messages were not handed over: they wait, their attempt not counted
        await deps.db
          .updateTable('queue_messages')
          .set((eb) => ({ state: 'ready', lease_until: null, attempts: eb('attempts', '-', 1) }))
          .where(
            'id',
            'in',
            taken.map((m) => m.id),
          )
          .execute();
        return blocked('the server module has no queue() handler');
      }
      let outcome: BatchOutcome & { error?: string | null; stack?: string | null };
      const text = result.ok ? (result.response?.text ?? '') : '';
      const got = result.ok ? v.safeParse(Outcome, safeJson(text)) : undefined;
      if (got?.success) outcome = got.output;
      else
        outcome = {
          outcome: 'exception',
          acks: [],
          retries: {},
          ackAll: false,
          retryAll: null,
          error: result.error?.message ?? 'the queue handler gave no outcome',
          stack: result.error?.stack ?? null,
        };
      const settled = await deps.db
        .transaction()
        .execute((trx) => settleBatch(trx, consumer, taken, outcome));
      const rel = { ...base, release_id: release.releaseId };
      const logs = runtime.events.admit(logEvents(rel, result.logs));
      const failed = outcome.outcome !== 'ok';
      await recordEvents(deps.db, [
        ...logs,
        {
          ...rel,
          type: failed ? 'queue.failed' : 'queue.delivered',
          severity: failed || settled.dropped ? 'warn' : 'info',
          message: failed
            ? `Queue ${queue}: the consumer threw on a batch of ${taken.length}: ${outcome.error ?? 'error'}.`
            : `Queue ${queue}: delivered a batch of ${taken.length} (${settled.acked} acknowledged, ${settled.retried} to retry).`,
          metadata: {
            queue,
            messages: taken.length,
            ...settled,
            ...(failed
              ? { error: outcome.error ?? null, stack: outcome.stack?.slice(0, 4000) ?? null }
              : {}),
          },
        },
      ]);
      // a dead letter queue this release consumes gets its delivery too
      const dlq = consumer.deadLetterQueue;
      const dlqConsumer = dlq ? release.bindings.consumers[dlq] : undefined;
      if (settled.deadLettered && dlq && dlqConsumer)
        await deps.db.transaction().execute((trx) => scheduleDue(trx, appId, dlq, dlqConsumer));
    }
    await deps.db.transaction().execute((trx) => scheduleDue(trx, appId, queue, consumer));
    if (taken.length) helpers.logger.debug(`queue ${queue} of ${appId}: ${taken.length} delivered`);
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
