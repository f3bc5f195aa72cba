/**
 * The baselines for bench-origin: a bare Hono server answering from memory the page (`/`), the same
 * page's brotli bytes (`/br`), and the server handler's text (`/text`, argv[3]). `/br-same-headers`
 * sends the brotli bytes with the header names and values the platform's static hit sends (argv[4], JSON),
 * a new `x-request-id` each time: what the headers alone cost, apart from the platform's own work.
 */
import zlib from 'node:zlib';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const size = Number(process.argv[2] ?? 20_000);
const text = process.argv[3] ?? 'hello';
const body = new TextEncoder().encode('<!doctype html>' + 'x'.repeat(size - 15));
const br = new Uint8Array(
  zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
);
const app = new Hono();
app.get('/', (c) => c.body(body, 200, { 'content-type': 'text/html' }));
app.get('/br', (c) =>
  c.body(br, 200, {
    'content-type': 'text/html',
    'content-encoding': 'br',
    vary: 'accept-encoding',
  }),
);
const platformHeaders = JSON.parse(process.argv[4] ?? '{}') as Record<string, string>;
let requests = 0;
app.get('/br-same-headers', (c) =>
  c.body(br, 200, {
    ...platformHeaders,
    'x-request-id': `${'0'.repeat(16)}-${(++requests).toString(36)}`,
  }),
);
app.get('/text', (c) => c.body(text, 200, { 'content-type': 'text/plain' }));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  process.stdout.write(`${info.port}\n`),
);
