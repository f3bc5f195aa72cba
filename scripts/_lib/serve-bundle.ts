/**
 * The Node control for benchmarks: a Workers-style bundle (argv[2], a file) served by
 * `@hono/node-server` on a free loopback port, printed on stdout once listening.
 */
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';

const mod = (await import(pathToFileURL(process.argv[2]!).href)) as {
  default: { fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response> };
};
const app = mod.default;
serve(
  {
    fetch: (request) => app.fetch(request, {}, { waitUntil() {}, passThroughOnException() {} }),
    port: 0,
    hostname: '127.0.0.1',
  },
  (info) => process.stdout.write(`${info.port}\n`),
);
