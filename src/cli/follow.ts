/** Following an app's event log: polls for events newer than the newest seen, oldest first. */
import type { EventSummary } from '../events/schemas.ts';

type Page = (extra: {
  limit?: string;
  cursor?: string;
}) => Promise<{ events: EventSummary[]; cursor: string | null }>;

const idOf = (id: string | undefined) => (id ? Number(id.replace(/^evt_/, '')) : 0);

/**
 * Calls `print` with each batch of new events (newest first, as the API gives them) every
 * `intervalMs` until `stopped()` says so; `after` is the newest event already shown.
 */
export async function followEvents(
  page: Page,
  print: (events: EventSummary[]) => void,
  options: {
    after: string | undefined;
    intervalMs: number;
    stopped: () => boolean;
    onError?: (err: unknown) => void;
  },
): Promise<void> {
  let newest = options.after;
  while (!options.stopped()) {
    await new Promise((r) => setTimeout(r, options.intervalMs));
    if (options.stopped()) return;
    try {
      const fresh: EventSummary[] = [];
      let cursor: string | null = null;
      do {
        const next = await page({ limit: '100', cursor: cursor ?? undefined });
        const newer = next.events.filter((e) => idOf(e.app_event_id) > idOf(newest));
        fresh.push(...newer);
        cursor = newer.length === next.events.length ? next.cursor : null;
      } while (cursor);
      if (fresh.length) {
        newest = fresh[0]!.app_event_id;
        print(fresh);
      }
    } catch (err) {
      if (!options.onError) throw err;
      options.onError(err);
    }
  }
}
