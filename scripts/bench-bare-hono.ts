/**
 * The baselines for bench-origin: a bare Hono server answering from memory the page (`/`), the same
 * page's brotli bytes (`/br`), and the server handler's text (`/text`, argv[3]).
 */
import zlib from 'node:zlib';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const size = Number(process.argv[2] ?? 20_000);
const text = process.argv[3] ?? 'hello';
const body = new TextEncoder().encode('<!doctype html>' + 'x'.repeat(size - 15));
const br = new Uint8Array(zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
const app = new Hono();
app.get('/', (c) => c.body(body, 200, { 'content-type': 'text/html' }));
app.get('/br', (c) => c.body(br, 200, { 'content-type': 'text/html', 'content-encoding': 'br', vary: 'accept-encoding' }));
app.get('/text', (c) => c.body(text, 200, { 'content-type': 'text/plain' }));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(`${info.port}\n`));
