/**
 * How an invocation and its result cross the worker boundary: as flat arrays, not as the nested
 * objects either side works with. Structured clone builds every object of a message property by
 * property, so a trivial invocation as nested objects costs several times what one array of
 * strings and numbers does to send and receive (`npm run bench:sandbox`). The pool encodes an
 * invocation and decodes its result; the worker does the opposite. Messages that are rare or
 * carry little (host calls, stream chunks, eviction) stay objects (`protocol.ts`).
 */
import type {
  CallRequest,
  Invocation,
  InvocationResult,
  InvocationWire,
  Rare,
  ResultWire,
} from './protocol.ts';

/**
 * What a `fetch` handler is given of its request (the body travels beside it), in the guest
 * prelude's format: lines of the method, the URL and the user as JSON (an empty line when there is
 * none), then each header's name and value on lines of their own (nothing after the user's line
 * when there are no headers). None of them holds a line break (a method is a token, a parsed URL
 * escapes them, JSON text has none, HTTP parsers refuse them in headers); a header value that does
 * anyway has them replaced by spaces. QuickJS reads lines in about half the time JSON.parse of the
 * same request takes.
 */
export function requestInput(request: CallRequest): string {
  let headers = '';
  for (const [name, value] of request.headers)
    headers += `${headers ? '\n' : ''}${oneLine(name)}\n${oneLine(value)}`;
  return `${request.method}\n${request.url}\n${request.user ? JSON.stringify(request.user) : ''}\n${headers}`;
}

const oneLine = (s: string): string => (s.includes('\n') ? s.replace(/[\r\n]/g, ' ') : s);

export function encodeInvocation(inv: Invocation): InvocationWire {
  const { app, release, limits } = inv;
  return [
    inv.id,
    inv.handler,
    inv.input,
    inv.body,
    app.app_id,
    app.origin,
    app.release_id,
    release.releaseId,
    release.entry,
    release.sources,
    inv.flags,
    inv.secrets,
    limits.cpuMs,
    limits.memoryBytes,
    limits.stackBytes,
    limits.wallMs,
    release.bytecode,
    inv.compile,
  ];
}

export function decodeInvocation(w: InvocationWire): Invocation {
  const inv: Invocation = {
    id: w[0],
    handler: w[1],
    input: w[2],
    app: { app_id: w[4], origin: w[5], release_id: w[6] },
    release: { releaseId: w[7], entry: w[8] },
    secrets: w[11],
    limits: { cpuMs: w[12], memoryBytes: w[13], stackBytes: w[14], wallMs: w[15] },
  };
  if (w[3] !== undefined) inv.body = w[3];
  if (w[9] !== undefined) inv.release.sources = w[9];
  if (w[10] !== undefined) inv.flags = w[10];
  if (w[16] !== undefined) inv.release.bytecode = w[16];
  if (w[17]) inv.compile = true;
  return inv;
}

export function encodeResult(id: number, r: InvocationResult): ResultWire {
  const res = r.response;
  let rare: Rare | undefined;
  if (r.error || r.logs || r.poisoned || r.quarantine || res?.streaming) {
    rare = {};
    if (r.error) rare.error = r.error;
    if (r.logs) rare.logs = r.logs;
    if (r.poisoned) rare.poisoned = true;
    if (r.quarantine) rare.quarantine = r.quarantine;
    if (res?.streaming) rare.streaming = true;
  }
  return [id, r.ok, res?.status, res?.headers, res?.text, res?.body, r.cpuMs, r.fetches, rare];
}

/** The result as the pool's callers see it: fields absent rather than undefined. */
export function decodeResult(w: ResultWire): InvocationResult {
  const r: InvocationResult = { ok: w[1] };
  if (w[2] !== undefined) {
    const response: NonNullable<InvocationResult['response']> = {
      status: w[2],
      headers: w[3] ?? [],
    };
    if (w[4] !== undefined) response.text = w[4];
    if (w[5] !== undefined) response.body = w[5];
    if (w[8]?.streaming) response.streaming = true;
    r.response = response;
  }
  if (w[6] !== undefined) r.cpuMs = w[6];
  if (w[7] !== undefined) r.fetches = w[7];
  const rare = w[8];
  if (rare) {
    if (rare.error) r.error = rare.error;
    if (rare.logs) r.logs = rare.logs;
    if (rare.poisoned) r.poisoned = true;
    if (rare.quarantine) r.quarantine = rare.quarantine;
  }
  return r;
}
