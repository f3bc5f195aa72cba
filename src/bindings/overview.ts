/**
 * What an app keeps in its bindings, for the console and the CLI: each KV namespace, R2 bucket and
 * queue the live release declares or that holds data, with its size, and the queues' depths.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { blobStore } from '../blobs/store.ts';
import { BINDINGS_PATH, type Bindings, bindingsOfFiles, NO_BINDINGS } from './declared.ts';

/** What an app's live release binds (none without one). */
export async function liveBindings(
  deps: Deps,
  app: { account_id: string; live_release_id: string | null },
): Promise<Bindings> {
  if (!app.live_release_id) return NO_BINDINGS;
  const file = await deps.db
    .selectFrom('release_files')
    .select(['path', 'sha256'])
    .where('release_id', '=', app.live_release_id)
    .where('path', '=', BINDINGS_PATH)
    .executeTakeFirst();
  if (!file) return NO_BINDINGS;
  const bytes = await blobStore(deps.config).get(deps.db, app.account_id, file.sha256);
  return bytes ? bindingsOfFiles([{ path: file.path, bytes }]) : NO_BINDINGS;
}

export async function bindingsOverview(deps: Deps, appId: string, live: Bindings) {
  const { rows } = await sql<{ kind: 'kv' | 'r2'; name: string; n: number; bytes: number }>`
    select 'kv' as kind, namespace as name, count(*)::int as n, coalesce(sum(size + octet_length(key)), 0)::float8 as bytes
      from kv_entries where app_id = ${appId} group by namespace
    union all
    select 'r2', bucket, count(*)::int, coalesce(sum(size), 0)::float8 from r2_objects where app_id = ${appId} group by bucket`.execute(
    deps.db,
  );
  const { rows: q } = await sql<{
    queue: string;
    ready: number;
    delayed: number;
    in_flight: number;
    dead_lettered: number;
  }>`
    select queue,
      count(*) filter (where state = 'ready' and visible_at <= now())::int as ready,
      count(*) filter (where state = 'ready' and visible_at > now())::int as delayed,
      count(*) filter (where state = 'inflight')::int as in_flight,
      count(*) filter (where dead_from is not null)::int as dead_lettered
    from queue_messages where app_id = ${appId} group by queue`.execute(deps.db);
  const kv = new Map<string, { keys: number; bytes: number }>();
  const r2 = new Map<string, { objects: number; bytes: number }>();
  for (const r of rows)
    if (r.kind === 'kv') kv.set(r.name, { keys: r.n, bytes: r.bytes });
    else r2.set(r.name, { objects: r.n, bytes: r.bytes });
  const buckets = new Set(Object.values(live.r2));
  const produced = new Set(Object.values(live.producers).map((p) => p.queue));
  const queues = new Set([...produced, ...Object.keys(live.consumers), ...q.map((x) => x.queue)]);
  const depth = new Map(q.map((x) => [x.queue, x]));
  const sorted = (s: Iterable<string>) => [...new Set(s)].sort();
  return {
    app_id: appId,
    kv: sorted([...live.kv, ...kv.keys()]).map((namespace) => ({
      namespace,
      bound: live.kv.includes(namespace),
      ...(kv.get(namespace) ?? { keys: 0, bytes: 0 }),
    })),
    r2: sorted([...buckets, ...r2.keys()]).map((bucket) => ({
      bucket,
      bound: buckets.has(bucket),
      ...(r2.get(bucket) ?? { objects: 0, bytes: 0 }),
    })),
    queues: sorted(queues).map((queue) => ({
      queue,
      produced: produced.has(queue),
      consumed: Object.hasOwn(live.consumers, queue),
      ready: depth.get(queue)?.ready ?? 0,
      delayed: depth.get(queue)?.delayed ?? 0,
      in_flight: depth.get(queue)?.in_flight ?? 0,
      dead_lettered: depth.get(queue)?.dead_lettered ?? 0,
      dead_letter_queue: live.consumers[queue]?.deadLetterQueue ?? null,
    })),
  };
}

/** Deletes every message of one of the app's queues that no delivery holds; returns how many. */
export async function purgeQueue(deps: Deps, appId: string, queue: string): Promise<number> {
  const r = await deps.db
    .deleteFrom('queue_messages')
    .where('app_id', '=', appId)
    .where('queue', '=', queue)
    .where('state', '=', 'ready')
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
