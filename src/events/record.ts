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

/**
 * Postgres stores no NUL in text or jsonb, nor a lone surrogate in jsonb: such a character (an
 * app's log line may hold any) becomes U+FFFD, so the event is stored instead of refused.
 */
const storable = (s: string): string =>
  s.replace(/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
function storableValue(v: unknown): unknown {
  if (typeof v === 'string') return storable(v);
  if (Array.isArray(v)) return v.map(storableValue);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storable(k), storableValue(x)]));
  return v;
}
/** Metadata as jsonb text; only text that holds an escaped NUL or surrogate is rebuilt. */
function metadataText(m: Record<string, unknown> | undefined): string {
  const text = JSON.stringify(m ?? {});
  return /\\u(0000|d[89a-f])/i.test(text) ? JSON.stringify(storableValue(JSON.parse(text))) : text;
}

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
        message: storable(e.message),
        metadata: metadataText(e.metadata),
        release_id: e.release_id ?? null,
        app_user_id: e.app_user_id ?? null,
        api_key_id: e.api_key_id ?? null,
        request_id: e.request_id ?? null,
      })),
    )
    .execute();
}
