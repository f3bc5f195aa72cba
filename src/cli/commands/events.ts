import type { EventSummary } from '../../events/schemas.ts';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { followEvents } from '../follow.ts';
import { c, CliError } from '../output.ts';

const SEVERITIES = ['debug', 'info', 'warn', 'error'] as const;
type EventSeverity = (typeof SEVERITIES)[number];
const COLORS: Record<string, (s: string) => string> = {
  debug: c.dim,
  info: c.cyan,
  warn: c.yellow,
  error: c.red,
};

const two = (n: number) => String(n).padStart(2, '0');
/** Local time as a log line starts: 2026-11-27 11:52:03. */
function stamp(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** One event as people read a log: the details as key=value, a stack as indented lines under it. */
function line(e: EventSummary): string {
  const { stack, ...rest } = (e.metadata ?? {}) as Record<string, unknown>;
  const pairs = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const head = `${c.dim(stamp(e.created_at))} ${(COLORS[e.severity] ?? String)(e.severity.padEnd(5))} ${e.type.padEnd(24)} ${e.message}${pairs ? ` ${c.dim(pairs)}` : ''}${e.release_id ? c.dim(` (${e.release_id})`) : ''}`;
  if (typeof stack !== 'string' || !stack) return head;
  return `${head}\n${stack
    .split('\n')
    .map((l) => `    ${c.dim(l.trim())}`)
    .join('\n')}`;
}

export async function events(opts: {
  app?: string;
  type?: string;
  severity?: string;
  search?: string;
  limit?: string;
  follow?: boolean;
  json?: boolean;
  interval?: string;
}): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const severity = opts.severity as EventSeverity | undefined;
  if (severity !== undefined && !SEVERITIES.includes(severity))
    throw new CliError(`--severity must be one of ${SEVERITIES.join(', ')}.`, 'invalid_request');
  const page = (extra: { limit?: string; cursor?: string }) =>
    api.request('GET /v0/apps/{app_id}/events', {
      params: { app_id: appId },
      query: { type: opts.type, severity, q: opts.search, ...extra },
    });
  if (opts.limit !== undefined && !/^\d+$/.test(opts.limit))
    throw new CliError('--limit must be a number from 1 to 100.', 'invalid_request');
  const first = await page({ limit: opts.limit });
  // Newest first from the API; print oldest first so the newest is at the bottom, like a log.
  const print = (list: EventSummary[]) => {
    for (const e of [...list].reverse())
      process.stdout.write(opts.json ? JSON.stringify(e) + '\n' : line(e) + '\n');
  };
  if (!opts.follow) {
    if (opts.json) process.stdout.write(JSON.stringify(first, null, 2) + '\n');
    else print(first.events);
    return;
  }
  print(first.events);
  let stop = false;
  process.once('SIGINT', () => (stop = true));
  process.once('SIGTERM', () => (stop = true));
  await followEvents(page, print, {
    after: first.events[0]?.app_event_id,
    intervalMs: Number(opts.interval ?? 1000),
    stopped: () => stop,
  });
}
