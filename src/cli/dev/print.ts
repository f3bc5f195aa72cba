/** How `platform dev` prints an app's events as they happen: one line each, coloured by level, stacks indented. */
import type { EventSummary } from '../../events/schemas.ts';
import { c } from '../output.ts';

const LEVEL: Record<string, (s: string) => string> = {
  debug: c.dim,
  info: c.cyan,
  warn: c.yellow,
  error: c.red,
};

function time(iso: string): string {
  return new Date(iso).toTimeString().slice(0, 8);
}

/** What to call an event in the left column. */
function label(type: string): string {
  if (type.startsWith('runtime.log.')) return 'log';
  if (type === 'runtime.request_error') return 'request';
  return type.split('.')[0]!;
}

export function formatEvent(e: EventSummary): string {
  const color = LEVEL[e.severity] ?? String;
  const meta = (e.metadata ?? {}) as Record<string, unknown>;
  let text = e.message;
  let extra = '';
  if (e.type.startsWith('runtime.log.')) {
    if (Object.keys(meta).length) extra = ` ${c.dim(JSON.stringify(meta))}`;
  } else if (e.type === 'runtime.request_error') {
    text = `${meta.method ?? ''} ${meta.path ?? ''} → ${meta.status ?? ''}: ${meta.error ?? e.message}`;
  } else if (e.type.startsWith('job.') || e.type.startsWith('webhook.')) {
    if (meta.error) extra = ` ${c.dim(String(meta.error))}`;
  } else if (
    e.type.startsWith('release.') ||
    e.type === 'secret.set' ||
    e.type === 'secret.deleted'
  ) {
    return ''; // the dev loop prints publishes and secrets itself
  }
  let out = `${c.dim(time(e.created_at))} ${color(e.severity.padEnd(5))} ${label(e.type).padEnd(8)} ${text}${extra}`;
  const stack = typeof meta.stack === 'string' ? meta.stack : undefined;
  if (stack) {
    const frames = stack.split('\n').filter((l) => l.trim());
    out += '\n' + frames.map((l) => `               ${c.dim(l.trim())}`).join('\n');
  }
  return out;
}
