/**
 * The HTTP listener, on the runtime's own server: `Deno.serve` under Deno, Node's `http` (through
 * @hono/node-server) elsewhere. Both hand the app a Request and take a Response; what reaches the
 * handler's `env` differs (Node's `incoming`, Deno's `remoteAddr`) and `http/client.ts` reads both.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Config } from '../config.ts';
import { serverOptions } from './listen.ts';
import { dropUntypedMark, UntypedAwareResponse } from './untyped.ts';

export type Fetch = (req: Request, env?: any) => Response | Promise<Response>;

export type Listening = {
  /** the port listened on (the one asked for, or the one the OS chose for port 0) */
  port: number;
  /** Stops taking connections; requests in flight finish, idle keep-alive connections close. */
  close(): Promise<void>;
  /** Closes every connection now (a second Ctrl-C). */
  hurry(): void;
};

type DenoServer = { finished: Promise<void>; shutdown(): Promise<void> };
type DenoRuntime = {
  serve(
    options: {
      port: number;
      hostname: string;
      signal?: AbortSignal;
      onListen?: (addr: { port: number }) => void;
      onError?: (err: unknown) => Response;
    },
    handler: (req: Request, info: unknown) => Response | Promise<Response>,
  ): DenoServer;
};

/** Deno's namespace when this runs on Deno. */
const deno = (globalThis as { Deno?: DenoRuntime }).Deno;

export function listenHttp(
  fetch: Fetch,
  options: { port: number; hostname: string; config?: Config },
): Promise<Listening> {
  return deno ? listenDeno(deno, fetch, options) : listenNode(fetch, options);
}

function listenNode(
  fetch: Fetch,
  options: { port: number; hostname: string; config?: Config },
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch,
        port: options.port,
        hostname: options.hostname,
        serverOptions: {
          ...(options.config ? serverOptions(options.config) : {}),
          ServerResponse: UntypedAwareResponse as typeof http.ServerResponse,
        },
      },
      (info: AddressInfo) => {
        const s = server as unknown as {
          closeIdleConnections?: () => void;
          closeAllConnections?: () => void;
        };
        resolve({
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // idle keep-alive sockets would hold close() open until they time out
              s.closeIdleConnections?.();
            }),
          hurry: () => s.closeAllConnections?.(),
        });
      },
    );
    server.once('error', reject);
  });
}

/**
 * `Deno.serve` has no request timeout to set (Node's `requestTimeout`): a client could send a body
 * a byte a minute and hold its connection and its handler for ever. The same limit is kept here:
 * a body not wholly received within `PLATFORM_REQUEST_TIMEOUT_SECONDS` of the request's arrival
 * fails for the handler reading it and the client gets Node's answer, a 408 and the connection
 * closed. Deno's HTTP/1 parser bounds the time for the headers itself (docs/decisions/deno.md).
 */
function listenDeno(
  runtime: DenoRuntime,
  fetch: Fetch,
  options: { port: number; hostname: string; config?: Config },
): Promise<Listening> {
  const requestMs = options.config?.timeouts.requestMs;
  return new Promise((resolve, reject) => {
    const abort = new AbortController();
    let server: DenoServer | undefined;
    try {
      server = runtime.serve(
        {
          port: options.port,
          hostname: options.hostname,
          signal: abort.signal,
          onListen: ({ port }) => {
            let closing: Promise<void> | undefined;
            let hurried = () => {};
            const cut = new Promise<void>((r) => (hurried = r));
            resolve({
              port,
              close: () =>
                (closing ??= Promise.race([server!.shutdown().then(() => server!.finished), cut])),
              hurry: () => {
                // Once shutdown() has begun Deno offers no way to cut its connections (an abort then
                // fails in Deno's own listener): the close stops waiting for them instead, and they
                // end with the process.
                if (closing) hurried();
                else abort.abort();
              },
            });
          },
        },
        // Deno passes its connection info (`remoteAddr`) where Node's server passes `incoming`
        async (req, info) =>
          dropUntypedMark(
            await (requestMs ? withDeadline(fetch, req, info, requestMs) : fetch(req, info)),
          ),
      );
    } catch (err) {
      reject(err);
    }
  });
}

function withDeadline(
  fetch: Fetch,
  req: Request,
  info: unknown,
  ms: number,
): Response | Promise<Response> {
  if (!req.body) return fetch(req, info);
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Read by hand rather than piped, so that on the deadline Deno's own body is cancelled. A read
  // already pending on it still holds the socket about 30 s after the 408 on Deno 2.9 (no API
  // reaches that connection); a body nobody reads is closed with the answer.
  const source = req.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setTimeout(() => {
        controller.error(new Error('the request body did not arrive within the request timeout'));
        source.cancel().catch(() => {});
        late();
      }, ms);
    },
    async pull(controller) {
      const { done, value } = await source.read().catch((err) => {
        clearTimeout(timer);
        throw err;
      });
      if (done) {
        clearTimeout(timer);
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      clearTimeout(timer);
      return source.cancel(reason);
    },
  });
  let late = () => {};
  const timedOut = new Promise<Response>((resolve) => {
    late = () => resolve(cutOff(ms));
  });
  const answered = Promise.resolve(
    // Not `new Request(req, …)`: that copies Deno's `signal`, and touching it opts into Deno's
    // legacy abort-on-success behaviour and a warning per process. Nothing here reads the signal.
    fetch(
      new Request(req.url, {
        method: req.method,
        headers: req.headers,
        body,
        duplex: 'half',
      } as RequestInit),
      info,
    ),
  ).finally(() => {
    // Answered: the deadline was for a handler waiting on the body. A timer left running would also
    // keep the process alive for the whole timeout after a stop.
    clearTimeout(timer);
  });
  return Promise.race([answered, timedOut]);
}

/**
 * A 408 whose body fails at once: Deno keeps a connection open while its request body is unread,
 * even after a `connection: close` answer, and a failed response body is the one thing that makes
 * it close the socket. The client reads the status and headers, then the connection ends. Deno
 * prints the failure's stack, so the stack is the sentence an operator should read.
 */
function cutOff(ms: number): Response {
  const reason = new Error('request timeout');
  reason.stack = `request timeout: the body did not arrive within ${ms / 1000} s; answered 408 and closed the connection`;
  const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(reason) });
  return new Response(body, {
    status: 408,
    statusText: 'Request Timeout',
    headers: { connection: 'close' },
  });
}
