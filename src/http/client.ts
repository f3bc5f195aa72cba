import type { Context } from 'hono';
import type { Env } from './env.ts';

type Bindings =
  | { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } }
  | undefined;

/**
 * The address of the peer that sent the request: Node's socket, or Deno's `remoteAddr`. Behind a
 * proxy every request shares the proxy's address; limits keyed on it then apply to the proxy.
 */
export function clientAddress(c: Context<Env>): string {
  const env = c.env as Bindings;
  return env?.incoming?.socket?.remoteAddress ?? env?.remoteAddr?.hostname ?? 'unknown';
}
