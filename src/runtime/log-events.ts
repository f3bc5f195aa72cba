import type { NewEvent } from '../events/record.ts';
import type { LogEntry } from '../sandbox/redact.ts';

/** `ctx.log` / `console` entries of one sandbox call (already redacted) as `runtime.log.<level>` events. */
export function logEvents(
  base: Omit<NewEvent, 'type' | 'message' | 'severity' | 'metadata'>,
  logs: LogEntry[] | undefined,
): NewEvent[] {
  return (logs ?? []).map((l) => ({
    ...base,
    type: `runtime.log.${l.level}`,
    severity: l.level,
    message: l.message,
    metadata: (l.metadata as Record<string, unknown> | undefined) ?? {},
  }));
}
