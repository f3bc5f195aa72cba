/** The baseline for bench-origin: a bare Hono server answering fixed bytes from memory. */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const size = Number(process.argv[2] ?? 20_000);
const body = new TextEncoder().encode('<!doctype html>' + 'x'.repeat(size - 15));
const app = new Hono();
app.get('/', (c) => c.body(body, 200, { 'content-type': 'text/html' }));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(`${info.port}\n`));
