/**
 * Running an app's `fetch(request, ctx)` in the sandbox for a request static routing did not
 * answer, and turning the outcome into what the visitor and the owner see: the app's response;
 * or, for a throw, a limit hit or a 5xx, the generic `runtime_error` body for the visitor and a
 * `runtime.request_error` event with the detail for the owner. `ctx.log` calls become
 * `runtime.log.<level>` events (already redacted in the worker).
 */
import type { Deps } from '../deps.ts';
import { errorBody } from '../errors.ts';
import type { NewEvent } from '../events/record.ts';
import type { EventWriter } from '../events/writer.ts';
import { QUARANTINE } from '../sandbox/pool.ts';
import { REQUEST_ID_HEADER } from '../http/base.ts';
import { readBodyLimited } from '../http/validate.ts';
import type { HeaderReads } from '../http/parsed-headers.ts';
import { ApiError } from '../errors.ts';
import type { LiveApp, ReleaseView, RuntimeCaches } from '../releases/live.ts';
import type { InvocationResult } from '../sandbox/protocol.ts';
import type { SandboxPool } from '../sandbox/pool.ts';
import { requestUser } from '../app-auth/service.ts';
import { logEvents } from '../runtime/log-events.ts';
import {
  badResponse,
  MAX_RESPONSE_HEADER_BYTES,
  MAX_RESPONSE_HEADERS,
  scrubRequestHeaders,
  scrubResponseHeaders,
} from './scrub.ts';
import { invokeRelease } from '../runtime/invoke.ts';
import { compressAnswer } from './compress-answer.ts';
import type { CacheMiss, HttpCache } from '../runtime/http-cache.ts';
import { devErrorPage, isDocumentRequest } from './dev-mode.ts';
import { roomFor, type BodyBudget, type BodyRoom } from '../http/body-budget.ts';

/** Sets a header on what scrubResponseHeaders gave (a plain object, or Headers when cookies are set). */
function setHeader(headers: Record<string, string> | Headers, name: string, value: string): void {
  if (headers instanceof Headers) headers.set(name, value);
  else headers[name] = value;
}

export const MAX_APP_REQUEST_BODY = 10 * 1024 * 1024;

const KIND_MESSAGES: Record<string, string> = {
  exception: 'The server handler threw an exception.',
  timeout: 'The server handler ran past its time limit.',
  memory: 'The server handler ran out of memory.',
  stack: 'The server handler overflowed its stack.',
  stream_too_large: 'The response stream grew past its size limit.',
  load: 'The server module failed to load.',
  'no-handler': 'The server module has no fetch() handler.',
  killed: 'The sandbox running the handler was stopped.',
  crash: 'The sandbox failed while running the handler.',
  status_5xx: 'The server handler answered with a server error.',
  quarantined:
    'This release keeps stopping its sandbox worker, so its server requests are refused for a while.',
  bad_status: 'The server handler answered with a status outside 200 to 599.',
  headers_too_large: `The server handler's response headers exceed ${MAX_RESPONSE_HEADERS} headers or ${MAX_RESPONSE_HEADER_BYTES / 1024} KiB.`,
};

export function runtimeErrorResponse(status: number, requestId: string): Response {
  return new Response(
    JSON.stringify(errorBody('runtime_error', 'The app could not handle this request.')),
    {
      status,
      headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId },
    },
  );
}

/**
 * A streamed answer goes to the visitor as the app produces it; what the app logged, and a failure
 * after the head went out (the stream threw, ran past its limits, or its worker stopped), are
 * recorded when it ends. A visitor who goes away cancels it, which is not a failure.
 */
function streamed(
  events$: EventWriter,
  base: Pick<NewEvent, 'app_id' | 'account_id' | 'release_id' | 'request_id'>,
  req: Request,
  requestUrl: string,
  answer: NonNullable<InvocationResult['response']>,
  requestId: string,
  cacheMiss?: CacheMiss,
): Response {
  const headers = scrubResponseHeaders(answer.headers, requestId);
  if (cacheMiss) setHeader(headers, 'cache-status', `platform; fwd=${cacheMiss}`);
  const noBody = req.method === 'HEAD' || answer.status === 204 || answer.status === 304;
  if (noBody) void answer.stream!.cancel().catch(() => {});
  void answer.streamEnd!.then(async (end) => {
    const events = logEvents(base, end.logs);
    if (!end.ok && end.error) {
      events.push({
        ...base,
        type: 'runtime.request_error',
        severity: 'error',
        message: `${KIND_MESSAGES[end.error.kind] ?? 'The server handler failed.'} The response had started streaming; it was cut off.`,
        metadata: {
          kind: end.error.kind,
          method: req.method,
          path: new URL(requestUrl).pathname,
          status: answer.status,
          streamed: true,
          bytes: end.bytes ?? null,
          error: end.error.message,
          stack: end.error.stack?.slice(0, 4000) ?? null,
          cpu_ms: end.cpuMs ?? null,
        },
      });
    }
    events$.add(events);
  });
  return new Response(noBody ? null : answer.stream!, { status: answer.status, headers });
}

type FallbackServices = {
  caches: RuntimeCaches;
  sandbox: () => SandboxPool;
  events: EventWriter;
  bodies: BodyBudget;
  httpCache?: HttpCache | undefined;
};

export async function runServerFallback(
  deps: Deps,
  services: FallbackServices,
  input: {
    req: Request;
    app: LiveApp;
    release: ReleaseView;
    origin: string;
    requestId: string;
    reads: HeaderReads;
    /** a GET the shared cache could not answer, and why: its answer is offered to the cache */
    cacheMiss?: CacheMiss | undefined;
  },
): Promise<Response> {
  const { req, app } = input;
  let body: ArrayBuffer | undefined;
  let room: BodyRoom | undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const taken = roomFor(
      services.bodies,
      app.appId,
      input.reads.get('content-length'),
      MAX_APP_REQUEST_BODY,
      () => new BodiesFull(),
    );
    if (!taken) return bodiesFull(input.requestId);
    const held = (room = taken.room);
    try {
      const bytes = await readBodyLimited(
        req,
        MAX_APP_REQUEST_BODY,
        () => new ApiError('payload_too_large', 'Request body is larger than 10 MiB.'),
        taken.arrived,
        input.reads.nodeBody,
      );
      held.hold(bytes.length);
      if (bytes.length)
        body =
          bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
            ? (bytes.buffer as ArrayBuffer)
            : (bytes.buffer.slice(
                bytes.byteOffset,
                bytes.byteOffset + bytes.byteLength,
              ) as ArrayBuffer);
    } catch (err) {
      held.release();
      if (err instanceof BodiesFull) return bodiesFull(input.requestId);
      throw err;
    }
  }
  try {
    return await answerCall(deps, services, input, body);
  } finally {
    room?.release();
  }
}

/** A chunked body grew past the room left (body-budget.ts). */
class BodiesFull extends Error {}

/** The process or this app holds as many request bodies as it may (body-budget.ts). */
function bodiesFull(requestId: string): Response {
  return new Response(
    JSON.stringify(
      errorBody(
        'service_unavailable',
        'More request bodies are arriving than can be taken at once; retry in a moment.',
      ),
    ),
    {
      status: 503,
      headers: {
        'content-type': 'application/json',
        'retry-after': '1',
        [REQUEST_ID_HEADER]: requestId,
      },
    },
  );
}

async function answerCall(
  deps: Deps,
  services: FallbackServices,
  input: {
    req: Request;
    app: LiveApp;
    release: ReleaseView;
    origin: string;
    requestId: string;
    reads: HeaderReads;
    cacheMiss?: CacheMiss | undefined;
  },
  body: ArrayBuffer | undefined,
): Promise<Response> {
  const { req, app, release } = input;
  // node-server and Deno both hand over an absolute, normalised URL without a fragment.
  const hash = req.url.indexOf('#');
  const requestUrl = hash < 0 ? req.url : req.url.slice(0, hash);
  // The session is resolved here, before cookies are scrubbed: app code sees the user, never the token.
  const user = await requestUser(deps, app.appId, release, req);
  const result: InvocationResult = await invokeRelease(deps, services, {
    handler: 'fetch',
    app,
    release,
    origin: input.origin,
    requestId: input.requestId,
    request: {
      method: req.method,
      url: requestUrl,
      headers: scrubRequestHeaders(input.reads),
      body,
      user,
    },
  });

  if (!result.ok && result.error?.kind === 'overloaded') {
    // this app's own calls are over their fair share: its visitor waits no longer, others never noticed
    const r = runtimeErrorResponse(503, input.requestId);
    r.headers.set('retry-after', '1');
    return r;
  }
  const base = {
    app_id: app.appId,
    account_id: app.accountId,
    release_id: release.releaseId,
    request_id: input.requestId,
  };
  const problem = result.ok && result.response ? badResponse(result.response) : null;
  if (result.ok && result.response?.stream && !problem && result.response.status < 500)
    // a streamed answer goes out as it is made: it is not kept
    return streamed(
      services.events,
      base,
      req,
      requestUrl,
      result.response,
      input.requestId,
      input.cacheMiss,
    );
  // a 5xx gets the generic answer whether the app streamed it or not (the contract's rule)
  if (result.ok && result.response?.stream) void result.response.stream.cancel().catch(() => {});
  const events: NewEvent[] = logEvents(base, result.logs);
  let response: Response;
  if (result.ok && result.response && !problem && result.response.status < 500) {
    const headers = scrubResponseHeaders(result.response.headers, input.requestId);
    const noBody =
      req.method === 'HEAD' || result.response.status === 204 || result.response.status === 304;
    const payload = noBody ? null : (result.response.text ?? result.response.body ?? null);
    const sent = payload === null ? null : await compressAnswer(req, headers, payload);
    if (input.cacheMiss && services.httpCache)
      services.httpCache.offer(
        { appId: app.appId, accountId: app.accountId },
        req.url,
        input.reads,
        result.response.status,
        headers,
        sent,
        input.cacheMiss,
      );
    response = new Response(sent as BodyInit | null, { status: result.response.status, headers });
  } else {
    const kind = problem ?? (result.ok ? 'status_5xx' : (result.error?.kind ?? 'crash'));
    const status = result.ok && result.response && !problem ? result.response.status : 500;
    events.push({
      ...base,
      type: 'runtime.request_error',
      severity: 'error',
      message: KIND_MESSAGES[kind] ?? 'The server handler failed.',
      metadata: {
        kind,
        method: req.method,
        path: new URL(requestUrl).pathname,
        status,
        // an app's own 5xx: what its answer began with, for the owner (the visitor gets the generic body)
        error:
          result.error?.message ?? (kind === 'status_5xx' ? (result.statusLine ?? null) : null),
        stack: result.error?.stack?.slice(0, 4000) ?? null,
        cpu_ms: result.cpuMs ?? null,
      },
    });
    if (result.quarantine) {
      const { mode, seconds } = result.quarantine;
      events.push({
        ...base,
        type: 'runtime.request_error',
        severity: 'error',
        message:
          `This release stopped its sandbox worker ${QUARANTINE.kills} times within ${QUARANTINE.withinMs / 1000} s (out of memory, stack or time). ` +
          (mode === 'own_worker'
            ? `It runs on a worker of its own for ${seconds / 60} minutes, so other apps are not affected.`
            : `Its server requests are refused for ${seconds} s.`),
        metadata: {
          kind: 'quarantined',
          mode,
          seconds,
          method: req.method,
          path: new URL(requestUrl).pathname,
          status: 500,
        },
      });
    }
    response =
      deps.config.devMode && isDocumentRequest(req)
        ? devErrorPage({
            status,
            summary: KIND_MESSAGES[kind] ?? 'The server handler failed.',
            error: result.error?.message ?? null,
            stack: result.error?.stack ?? null,
            method: req.method,
            path: new URL(requestUrl).pathname,
            releaseId: release.releaseId,
            requestId: input.requestId,
          })
        : runtimeErrorResponse(status, input.requestId);
  }
  // written in a batch after the answer goes out (events/writer.ts)
  services.events.add(events);
  // a streamed answer that was not sent (a 5xx) still logged what it logged: its call's lines come
  // when its stream ends
  const ended = result.ok ? result.response?.streamEnd : undefined;
  if (ended) void ended.then((end) => services.events.add(logEvents(base, end.logs)));
  return response;
}
