/**
 * Which service processes are running, and what each can read: every node beats a row in
 * `node_heartbeats` (times are the database's own `now()`) and deletes it when it stops. A row whose
 * beat is older than LIVE_WITHIN_SECONDS belongs to a node that died without saying so.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { S3Config } from '../config.ts';
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';

const BEAT_MS = 5_000;
export const LIVE_WITHIN_SECONDS = 30;

/** The bucket a node reads blobs from, as one comparable string (null: it has none). */
export function bucketIdentity(s3: S3Config | undefined): string | null {
  return s3 ? `${s3.endpoint ?? 'aws'}/${s3.bucket}/${s3.prefix}` : null;
}

export type NodeHeartbeat = { readonly nodeId: string; stop(): Promise<void> };

export function startNodeHeartbeat(deps: Deps, role: string): NodeHeartbeat {
  const nodeId = `node_${randomBytes(8).toString('hex')}`;
  const row = {
    node_id: nodeId,
    host: hostname(),
    pid: process.pid,
    role,
    blob_bucket: bucketIdentity(deps.config.blobs.s3),
  };
  const beat = () =>
    deps.db
      .insertInto('node_heartbeats')
      .values(row)
      .onConflict((oc) => oc.column('node_id').doUpdateSet({ beat_at: sql`now()` }))
      .execute()
      .catch((err) => deps.log.warn('node heartbeat failed', { error: String(err) }));
  // rows of nodes that died without a word (SIGKILL, a lost machine) go after a day
  const first = deps.db
    .deleteFrom('node_heartbeats')
    .where('beat_at', '<', sql<Date>`now() - interval '1 day'`)
    .execute()
    .catch(() => {})
    .then(beat);
  const timer = setInterval(beat, BEAT_MS);
  timer.unref();
  return {
    nodeId,
    async stop() {
      clearInterval(timer);
      await first;
      await deps.db
        .deleteFrom('node_heartbeats')
        .where('node_id', '=', nodeId)
        .execute()
        .catch(() => {});
    },
  };
}

/** Nodes whose beat is recent. */
export async function liveNodes(db: Executor) {
  return db
    .selectFrom('node_heartbeats')
    .select(['node_id', 'host', 'pid', 'role', 'blob_bucket', 'started_at', 'beat_at'])
    .where('beat_at', '>', sql<Date>`now() - make_interval(secs => ${LIVE_WITHIN_SECONDS})`)
    .orderBy('started_at')
    .execute();
}
