/**
 * Request ids: `X-Request-Id` on every response. An incoming id of safe characters is kept so a
 * proxy's id carries through; otherwise one is made from a random per-process prefix and a
 * counter, which is unique across nodes and restarts and costs next to nothing on the hot path.
 */
import { randomBytes } from 'node:crypto';

/** Lowercase, as HTTP/2 requires and as header lookups compare cheapest. */
export const REQUEST_ID_HEADER = 'x-request-id';

const PREFIX = randomBytes(8).toString('hex');
let counter = 0;

/** A new id: 16 hex characters, a dash, then a base-36 counter. */
export function newRequestId(): string {
  counter = counter === Number.MAX_SAFE_INTEGER ? 0 : counter + 1;
  return `${PREFIX}-${counter.toString(36)}`;
}

const SAFE = /^[\w\-=]{1,255}$/;

/** The caller's id when it is safe to echo, else a new one. */
export function requestIdFor(incoming: string | null | undefined): string {
  return incoming && SAFE.test(incoming) ? incoming : newRequestId();
}
