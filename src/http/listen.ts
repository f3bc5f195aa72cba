/**
 * The Node HTTP server's own limits, shared by `npm start` and the tests' real listeners. A client
 * gets `PLATFORM_HEADERS_TIMEOUT_SECONDS` (20 s) to send its headers and
 * `PLATFORM_REQUEST_TIMEOUT_SECONDS` (120 s) for the whole request: a 10 MiB body from a phone on
 * a 1 Mbit/s uplink fits, a client trickling bytes to hold a connection open does not.
 */
import type { ServerOptions } from 'node:http';
import type { Config } from '../config.ts';

export function serverOptions(config: Config): ServerOptions {
  return {
    headersTimeout: config.timeouts.headersMs,
    requestTimeout: config.timeouts.requestMs,
    // how often Node checks the two timeouts above (default 30 s, too coarse for a short limit)
    connectionsCheckingInterval: Math.min(
      30_000,
      Math.max(250, Math.floor(config.timeouts.headersMs / 4)),
    ),
  };
}
