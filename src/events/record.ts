import type { Executor } from '../db/database.ts';
import type { Severity } from '../db/schema.ts';

export type NewEvent = {
  app_id: string;
  account_id: string;
  type: string;
  severity?: Severity;
  message: string;
  metadata?: Record<string, unknown>;
  release_id?: string | null;
  app_user_id?: string | null;
  api_key_id?: string | null;
  request_id?: string | null;
};

/** Appends events to an app's log (inside the caller's transaction when given one). */
export async function recordEvents(db: Executor, events: NewEvent[]): Promise<void> {
  if (!events.length) return;
  await db
    .insertInto('app_events')
    .values(
      events.map((e) => ({
        app_id: e.app_id,
        account_id: e.account_id,
        type: e.type,
        severity: e.severity ?? 'info',
        message: e.message,
        metadata: JSON.stringify(e.metadata ?? {}),
        release_id: e.release_id ?? null,
        app_user_id: e.app_user_id ?? null,
        api_key_id: e.api_key_id ?? null,
        request_id: e.request_id ?? null,
      })),
    )
    .execute();
}
