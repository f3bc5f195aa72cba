import { Hono } from 'hono';
import type { Ctx } from './platform';

type Message = { name: string; message: string };

// `c.env` is the platform's ctx: data, secrets, jobs, log
const app = new Hono<{ Bindings: Ctx }>();
const messages = (c: { env: Ctx }) => c.env.data.collection<Message>('messages');

app.get('/api/messages', async (c) => {
  const rows = await messages(c).list({ limit: 100 });
  return c.json({ messages: rows.reverse() });
});

// the form on public/index.html posts here; scripts may send JSON
app.post('/api/messages', async (c) => {
  const isJson = (c.req.header('content-type') ?? '').includes('application/json');
  const input = isJson ? await c.req.json<Record<string, unknown>>() : await c.req.parseBody();
  const name = String(input.name ?? '')
    .trim()
    .slice(0, 80);
  const message = String(input.message ?? '')
    .trim()
    .slice(0, 1000);
  if (!name || !message) return c.json({ error: 'name and message are both required' }, 400);
  const row = await messages(c).create({ name, message });
  c.env.log.info('message saved', { id: row.id });
  return isJson ? c.json(row, 201) : c.redirect('/', 303);
});

app.get('/api/health', (c) => c.json({ ok: true, release: c.env.app.release_id }));

app.notFound((c) => c.json({ error: 'not found' }, 404));
// an error that escapes reaches the platform: it is logged with a stack that names this file,
// and the visitor gets a generic `runtime_error`
app.onError((err) => {
  throw err;
});

export default app;
