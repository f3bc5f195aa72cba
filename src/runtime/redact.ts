/**
 * Redaction of app log events (contract, Events rule 5): metadata keys that look secret, long
 * token-like values, and any value the app read through ctx.secrets are replaced.
 */
export type LogEntry = { level: 'debug' | 'info' | 'warn' | 'error'; message: string; metadata?: unknown };

export const REDACTED = '[redacted]';
const SECRET_KEY = /token|secret|password|passwd|api[_-]?key|authorization|cookie|credential|private[_-]?key/i;
const TOKEN_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-+/=.~:]{32,}$/;
const MAX_MESSAGE = 2000;
const MAX_META_JSON = 8192;

function scrubString(s: string, secrets: string[]): string {
  let out = s;
  for (const v of secrets) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return out.split(/(\s+)/).map((w) => (TOKEN_LIKE.test(w) ? REDACTED : w)).join('');
}

function scrub(value: unknown, secrets: string[], depth: number): unknown {
  if (typeof value === 'string') return scrubString(value, secrets);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrub(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 100)) {
    out[k] = SECRET_KEY.test(k) ? REDACTED : scrub(v, secrets, depth + 1);
  }
  return out;
}

export function redactLog(entry: LogEntry, secretValues: string[]): LogEntry {
  let message = scrubString(entry.message, secretValues);
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE)}… (truncated)`;
  let metadata = entry.metadata === undefined ? undefined : scrub(entry.metadata, secretValues, 0);
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) metadata = { value: metadata };
  if (metadata !== undefined && JSON.stringify(metadata).length > MAX_META_JSON) metadata = { truncated: true };
  return { level: entry.level, message, metadata };
}
