/**
 * Redaction of what app code reports (contract, Events rule 5), applied in the sandbox worker before
 * anything leaves it: log messages and metadata (keys and values), `console` arguments, and error
 * messages and stacks. Replaced: every secret value of the app (raw and JSON-escaped), metadata keys
 * that look secret, and long token-like words. Nesting past MAX_DEPTH is cut, never passed through.
 */
export type LogEntry = {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  metadata?: unknown;
  /** `console.*` arguments as the guest passed them: strings, or `{ $v: value }` for anything structured */
  parts?: unknown[];
};

export const REDACTED = '[redacted]';
const SECRET_KEY =
  /token|secret|password|passwd|api[_-]?key|authorization|cookie|credential|private[_-]?key/i;
const TOKEN_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-+/=.~:]{32,}$/;
const MAX_MESSAGE = 2000;
const MAX_META_JSON = 8192;
const MAX_DEPTH = 8;
const TOO_DEEP = '[truncated: nested too deep]';

/** The forms a secret value can take in text: as it is, and JSON-escaped (inside a JSON string). */
export function secretForms(values: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const v of values) {
    if (v.length < 4) continue;
    out.add(v);
    const escaped = JSON.stringify(v).slice(1, -1);
    if (escaped !== v) out.add(escaped);
  }
  // longest first, so a secret containing another is replaced whole
  return [...out].sort((a, b) => b.length - a.length);
}

export function scrubString(s: string, secrets: string[]): string {
  let out = s;
  for (const v of secrets) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return out
    .split(/(\s+)/)
    .map((w) => (TOKEN_LIKE.test(w) ? REDACTED : w))
    .join('');
}

function scrub(value: unknown, secrets: string[], depth: number): unknown {
  if (typeof value === 'string') return scrubString(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrub(v, secrets, depth + 1));
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 100)) {
    out[scrubString(k, secrets)] = SECRET_KEY.test(k) ? REDACTED : scrub(v, secrets, depth + 1);
  }
  return out;
}

/** `console.*` arguments formatted as text after redaction: strings as they are, the rest as JSON. */
function formatParts(parts: unknown[], secrets: string[]): string {
  return parts
    .map((p) => {
      if (typeof p === 'string') return scrubString(p, secrets);
      const value = (p as { $v?: unknown } | null)?.$v;
      const text = JSON.stringify(scrub(value, secrets, 0));
      return text === undefined ? String(value) : text;
    })
    .join(' ');
}

function truncate(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}… (truncated)` : message;
}

export function redactLog(entry: LogEntry, secretValues: string[]): LogEntry {
  const message = truncate(
    entry.parts ? formatParts(entry.parts, secretValues) : scrubString(entry.message, secretValues),
  );
  let metadata = entry.metadata === undefined ? undefined : scrub(entry.metadata, secretValues, 0);
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  )
    metadata = { value: metadata };
  if (metadata !== undefined && JSON.stringify(metadata).length > MAX_META_JSON)
    metadata = { truncated: true };
  return { level: entry.level, message, metadata };
}
