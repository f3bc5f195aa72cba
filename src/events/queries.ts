import type { Executor } from '../db/database.ts';
import type { Severity } from '../db/schema.ts';

export type EventFilter = {
  appId: string;
  type?: string;
  severity?: Severity;
  releaseId?: string;
  beforeId?: number;
  limit: number;
};

/** Newest first by id (keyset), so a cursor pages through every event once even while new ones arrive. */
export async function listEvents(db: Executor, f: EventFilter) {
  let q = db.selectFrom('app_events').selectAll().where('app_id', '=', f.appId);
  if (f.type) q = q.where('type', '=', f.type);
  if (f.severity) q = q.where('severity', '=', f.severity);
  if (f.releaseId) q = q.where('release_id', '=', f.releaseId);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}
export type EventRow = Awaited<ReturnType<typeof listEvents>>[number];
