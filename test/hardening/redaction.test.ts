/**
 * Secrets stay out of events, whatever app code does with them: thrown, rejected, cached and logged
 * later, JSON-escaped, used as a key, nested deep, passed to console.log; in requests, jobs and
 * webhooks. Read back as a viewer, who may read events but never secret values.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import type { EventSummary } from '../../src/events/schemas.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';
import { startWorker } from '../_lib/mail.ts';

const h = await createHarness();
const worker = await startWorker(h);
const SECRET = 'sk_live"quote\\back-7f3a9';
const ESCAPED = JSON.stringify(SECRET).slice(1, -1);

const server = `let cached;
export default {
  async fetch(req, ctx) {
    const p = new URL(req.url).pathname;
    if (p === '/throw') throw new Error('failed with ' + ctx.secrets.get('API_TOKEN'));
    if (p === '/reject') return Promise.reject(new Error('rejected: ' + ctx.secrets.get('API_TOKEN')));
    if (p === '/throw-object') throw { message: ctx.secrets.get('API_TOKEN') };
    if (p === '/cache') { cached = ctx.secrets.get('API_TOKEN'); return new Response('cached'); }
    if (p === '/later') { ctx.log.info('later ' + cached); console.log('later too', cached); return new Response('ok'); }
    if (p === '/shapes') {
      const s = ctx.secrets.get('API_TOKEN');
      ctx.log.info('escaped', { inner: JSON.stringify({ s }) });
      ctx.log.info('as a key', { [s]: 1 });
      let deep = { password: 'hunter2', token: s };
      for (let i = 0; i < 12; i++) deep = { a: deep };
      ctx.log.info('deep', deep);
      console.log('x', { password: 'hunter2', authorization: 'Bearer abcdef0123456789abcdef0123456789', nested: { note: s } });
      console.error({ s });
      return new Response('ok');
    }
    if (p === '/enqueue') { await ctx.jobs.enqueue('boom', {}); return new Response('queued'); }
    return new Response('hi');
  },
  async job(event, ctx) { throw new Error('job failed with ' + ctx.secrets.get('API_TOKEN')); },
  async webhook(event, ctx) { throw new Error('hook failed with ' + ctx.secrets.get('API_TOKEN')); },
};`;

test('no secret value reaches any event a viewer can read', async () => {
  const u = await newUser(h);
  const bundle = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: {
      secrets: { required: ['API_TOKEN'] },
      jobs: { boom: { max_attempts: 1 } },
      webhooks: { hook: { provider: 'none', deliver_to: 'server' } },
    },
    files: [file('public/index.html', 'hi'), file('server.js', server, 'text/javascript')],
  });
  const first = await h.call('PUT', '/v0/apps', { key: u.api_key, body: bundle });
  const appId = first.body.app_id;
  assert.is(
    (
      await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, {
        key: u.api_key,
        body: { value: SECRET },
      })
    ).status,
    200,
  );
  assert.is(
    (await h.call('PUT', `/v0/apps/${appId}`, { key: u.api_key, body: bundle })).body.status,
    'published',
  );
  const host = `${appId}.apps.localhost`;
  for (const path of ['/throw', '/reject', '/throw-object'])
    assert.is((await h.call('GET', path, { host })).status, 500, path);
  assert.is((await h.call('GET', '/cache', { host })).text, 'cached');
  assert.is((await h.call('GET', '/later', { host })).status, 200);
  assert.is((await h.call('GET', '/shapes', { host })).status, 200);
  assert.is((await h.call('GET', '/enqueue', { host })).text, 'queued');
  assert.is(
    (await h.call('POST', '/_platform/webhooks/hook', { host, body: { x: 1 } })).status,
    500,
  );

  const viewer = await newMember(h, u.account_id, 'viewer');
  let events: EventSummary[] = [];
  for (let i = 0; i < 100; i++) {
    events = (
      await h.api('GET /v0/apps/{app_id}/events', {
        key: viewer.api_key,
        params: { app_id: appId },
        query: { limit: '100' },
      })
    ).events;
    if (events.some((e) => e.type === 'job.failed')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const types = new Set(events.map((e) => e.type));
  for (const t of [
    'runtime.request_error',
    'runtime.log.info',
    'job.failed',
    'webhook.delivery_failed',
  ])
    assert.ok(types.has(t), `${t} was recorded`);
  // every key and string value of every event, as stored
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) strings.push(k), walk(x);
  };
  walk(events);
  for (const [label, needle] of [
    ['the secret', SECRET],
    ['the JSON-escaped secret', ESCAPED],
    ['a password nested deep or passed to console.log', 'hunter2'],
    ['a bearer token passed to console.log', 'abcdef0123456789abcdef0123456789'],
  ] as const) {
    const found = strings.find((x) => x.includes(needle));
    assert.is(found, undefined, `${label} leaked in: ${found}`);
  }
  // what was said is still there, minus the secrets
  const later = events.find((e) => e.message.startsWith('later too'));
  assert.is(later?.message, 'later too [redacted]');
  const consoleLine = events.find((e) => e.message.startsWith('x '));
  assert.equal(JSON.parse(consoleLine?.message.slice(2) ?? 'null'), {
    password: '[redacted]',
    authorization: '[redacted]',
    nested: { note: '[redacted]' },
  });
  const thrown = events.find(
    (e) => e.type === 'runtime.request_error' && e.metadata.path === '/throw',
  );
  assert.match(String(thrown?.metadata.error), 'failed with [redacted]');
});

test.after(async () => {
  await worker.stop();
  await h.close();
});
test.run();
