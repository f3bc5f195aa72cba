/**
 * How an invocation and its result cross the worker boundary: as flat arrays, not as the nested
 * objects either side works with. Structured clone builds every object of a message property by
 * property; a trivial invocation as nested objects took ~7 µs to send and receive, as one array of
 * strings and numbers ~2 µs (both ends, a MessageChannel on one thread). The pool encodes an
 * invocation and decodes its result; the worker does the opposite. Messages that are rare or
 * carry little (host calls, stream chunks, eviction) stay objects (`protocol.ts`).
 */
import type { CallRequest, Invocation, InvocationResult } from './protocol.ts';

export type InvocationWire = [
  id: number,
  handler: Invocation['handler'],
  input: string,
  body: ArrayBuffer | undefined,
  appId: string,
  origin: string,
  appReleaseId: string,
  releaseId: string,
  entry: string,
  sources: Record<string, string> | undefined,
  flags: Invocation['flags'],
  secrets: Record<string, string>,
  cpuMs: number,
  memoryBytes: number,
  stackBytes: number,
  wallMs: number,
];

/** What a `fetch` handler is given of its request (the body travels beside it): two JSON lines, the guest prelude's format. */
export function requestInput(request: CallRequest): string {
  return `${JSON.stringify({ method: request.method, url: request.url, user: request.user ?? null })}\n${JSON.stringify(request.headers)}`;
}

export function encodeInvocation(inv: Invocation): InvocationWire {
  const { app, release, limits } = inv;
  return [inv.id, inv.handler, inv.input, inv.body, app.app_id, app.origin, app.release_id, release.releaseId, release.entry, release.sources, inv.flags, inv.secrets, limits.cpuMs, limits.memoryBytes, limits.stackBytes, limits.wallMs];
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
  return inv;
}

/** What a result carries beside its response head and body, present only when one of them is. */
type Rare = Pick<InvocationResult, 'error' | 'logs' | 'poisoned' | 'quarantine'> & { streaming?: true };

export type ResultWire = [
  id: number,
  ok: boolean,
  status: number | undefined,
  headers: [string, string][] | undefined,
  text: string | undefined,
  body: ArrayBuffer | undefined,
  cpuMs: number | undefined,
  fetches: number | undefined,
  rare: Rare | undefined,
];

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
    const response: NonNullable<InvocationResult['response']> = { status: w[2], headers: w[3] ?? [] };
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
