/**
 * The review of where request data goes: a marker is sent in every part of a request the platform
 * receives (query, headers, cookies, body, path) on the API host, the console, the app origin's
 * `/_platform` routes, server handlers that fail and webhooks that are rejected. The platform never
 * copies any of it into its own process log (captured at `debug`) or into an event. What app code
 * itself logs is the app's business (and is redacted separately, see redaction.test.ts).
 */
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/logger.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_LOG_LEVEL: 'debug' });
const lines: string[] = [];
h.deps.log = createLogger('debug', (line) => lines.push(line));
const MARK = 'Zq9marker';
const mark = (where: string) => `${MARK}${where}`;
/** Path segments: the debug access log records the path by design (never the query); nothing else may. */
const PATH = 'Pq7segment';
const segment = (where: string) => `${PATH}${where}`;

const SERVER = `export default {
  async fetch(req, ctx) {
    const p = new URL(req.url).pathname;
    if (p === '/crash') throw new Error('plain crash');
    if (p === '/status') return new Response('no', { status: 503 });
    if (p === '/probe') {
      // request data passed straight into platform calls, as careless app code does
      const m = new URL(req.url).searchParams.get('m');
      const notes = ctx.data.collection('notes');
      const uploads = ctx.files.store('uploads');
      const tries = {
        nulField: () => notes.create({ title: m + '\u0000' }),
        nulWhere: () => notes.list({ where: { title: m + '\u0000' } }),
        nulUpdate: () => notes.update(m + '\u0000', { title: 'x' }),
        nulGet: () => notes.get(m + '\u0000'),
        nulDelete: () => notes.delete(m + '\u0000'),
        nulFileDelete: () => uploads.delete(m + '\u0000'),
        nulSignedUrl: () => uploads.createSignedUrl(m + '\u0000'),
        unknownField: () => notes.create({ [m]: 1 }),
        unknownCollection: () => ctx.data.collection(m).get('x'),
        unknownJob: () => ctx.jobs.enqueue(m, {}),
        badDelay: () => ctx.jobs.enqueue('work', { v: m }, { delay_seconds: m }),
        badContentType: () => uploads.createUpload(m, { filename: 'a.txt', content_type: m }),
        unknownStore: () => ctx.files.store(m).delete('x'),
      };
      const out = {};
      for (const [k, t] of Object.entries(tries)) {
        try { out[k] = { ok: await t() }; } catch (e) { out[k] = { code: e && e.code, message: String(e && e.message) }; }
      }
      return Response.json(out);
    }
    if (p === '/data') { await ctx.data.collection('notes').get(new URL(req.url).searchParams.get('id')); return new Response('ok'); }
    return new Response('hi');
  },
};`;

async function publish() {
  const u = await newUser(h);
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: {
      data: {
        collections: {
          notes: {
            access: { read: 'public', write: 'authenticated' },
            fields: { title: 'string' },
          },
        },
      },
      auth: { mode: 'app_users', public_signup: true },
      files: { stores: { uploads: { public: false } } },
      secrets: { required: ['HOOK_SECRET'] },
      jobs: { work: {} },
      webhooks: {
        signed: { provider: 'generic_hmac', secret: 'HOOK_SECRET', deliver_to: 'server' },
        open: { provider: 'none', deliver_to: 'server' },
      },
    },
    files: [file('public/index.html', 'hi'), file('server.js', SERVER, 'text/javascript')],
  });
  const first = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  const set = await h.call('PUT', `/v0/apps/${first.body.app_id}/secrets/HOOK_SECRET`, {
    key: u.api_key,
    body: { value: 'whsec_' + Buffer.from('k'.repeat(32)).toString('base64') },
  });
  assert.ok(set.status < 300, set.text);
  const r = await h.call('PUT', `/v0/apps/${first.body.app_id}`, { key: u.api_key, body });
  assert.is(r.body.activation?.status, 'live', r.text);
  return {
    key: u.api_key,
    appId: r.body.app_id as string,
    host: `${r.body.app_id}.apps.localhost`,
  };
}

function headersWith(where: string): Record<string, string> {
  return {
    cookie: `__Host-platform_session=${mark(`${where}cookie`)}; platform_app_session=${mark(`${where}appcookie`)}`,
    'user-agent': mark(`${where}ua`),
    referer: `http://example.test/${mark(`${where}referer`)}`,
    'x-forwarded-for': mark(`${where}xff`),
    'x-custom': mark(`${where}custom`),
  };
}

test('no part of a request reaches the process log or an event unless app code puts it there', async () => {
  const app = await publish();
  const api = headersWith('api');
  // API host: a bad key, bad queries, malformed and invalid bodies, unknown routes
  await h.call('GET', `/v0/apps?limit=${mark('q1')}&cursor=${mark('q2')}`, {
    key: app.key,
    headers: api,
  });
  await h.call('GET', `/v0/apps/${app.appId}/events?type=${mark('q3')}&since=${mark('q4')}`, {
    key: app.key,
    headers: api,
  });
  await h.call('GET', '/v0/apps', { key: `ap_${mark('key')}`, headers: api });
  await h.call('GET', '/v0/apps', { headers: { ...api, authorization: `Basic ${mark('basic')}` } });
  await h.call('PUT', '/v0/apps', {
    key: app.key,
    headers: api,
    rawBody: `{"app": ${mark('badjson')}`,
  });
  await h.call('PUT', '/v0/apps', {
    key: app.key,
    headers: { ...api, 'content-type': 'application/json' },
    rawBody: `{"app": ${mark('badjson')}`,
  });
  await h.call('PUT', '/v0/apps', {
    key: app.key,
    headers: api,
    body: { app: { name: mark('name'.repeat(100)) }, files: mark('files') },
  });
  await h.call('PUT', `/v0/apps/${app.appId}/secrets/${segment('secretname')}`, {
    key: app.key,
    headers: api,
    body: { value: mark('secretvalue') },
  });
  await h.call('POST', `/v0/${segment('path')}?x=${mark('q5')}`, {
    key: app.key,
    headers: api,
    body: { a: mark('body') },
  });
  await h.call('POST', '/v0/auth/email/request', {
    headers: api,
    body: { email: `${mark('email')}@example.com` },
  });
  await h.call('POST', '/v0/auth/email/request', {
    headers: api,
    body: { email: mark('notanemail') },
  });
  await h.call('POST', '/v0/auth/email/confirm', {
    host: h.config.hosts.console,
    headers: api,
    body: { token: mark('linktoken') },
  });
  await h.call('POST', '/v0/auth/signup/complete', {
    host: h.config.hosts.console,
    headers: api,
    body: { username: mark('username') },
  });
  await h.call('POST', '/v0/auth/device/start', {
    headers: api,
    body: { client_name: mark('client') },
  });
  await h.call('POST', '/v0/auth/device/poll', {
    headers: api,
    body: { device_code: mark('devicecode') },
  });
  await h.call('GET', `/v0/auth/device/approval?user_code=${mark('usercode')}`, {
    key: app.key,
    headers: api,
  });
  // console and docs hosts
  await h.call('GET', `/?next=${mark('next')}`, {
    host: h.config.hosts.console,
    headers: headersWith('console'),
  });
  await h.call('POST', '/sign-in', {
    host: h.config.hosts.console,
    headers: { ...headersWith('console'), 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: `email=${mark('form')}`,
  });
  await h.call('GET', `/${segment('docs')}`, {
    host: h.config.hosts.docs,
    headers: headersWith('docs'),
  });

  // the app origin: static misses, /_platform routes, failing handlers, host calls, webhooks
  const o = headersWith('origin');
  const at = (
    path: string,
    init: {
      method?: string;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
    } = {},
  ) =>
    h.call(init.method ?? 'GET', path, {
      host: app.host,
      headers: { ...o, ...init.headers },
      body: init.body,
      rawBody: init.rawBody,
    });
  await at(`/missing.png?x=${mark('q6')}`);
  await at(`/crash?token=${mark('q7')}`, {
    headers: { authorization: `Bearer ${mark('bearer')}` },
  });
  await at(`/status?token=${mark('q8')}`);
  await at(`/data?id=${mark('dataid')}`);
  await at('/_platform/auth/login', {
    method: 'POST',
    body: { email: `${mark('login')}@example.com`, password: mark('password') },
  });
  await at('/_platform/auth/signup', {
    method: 'POST',
    body: { email: mark('signup'), password: mark('pw') },
  });
  await at('/_platform/auth/signup', {
    method: 'POST',
    rawBody: `{"email":${mark('raw')}`,
    headers: { 'content-type': 'application/json', origin: `http://${app.host}` },
  });
  await at('/_platform/auth/verify', { method: 'POST', body: { token: mark('verify') } });
  await at('/_platform/auth/invite/accept', {
    method: 'POST',
    body: { token: mark('invite'), password: mark('invitepw') },
  });
  await at('/_platform/auth/session');
  await at(`/_platform/data/notes/${segment('row')}?filter=${mark('q9')}`);
  await at('/_platform/data/notes', {
    method: 'POST',
    body: { title: mark('title'), extra: mark('extra') },
  });
  await at(`/_platform/data/${segment('collection')}`);
  await at(
    `/_platform/files/uploads/${segment('fileid')}?sig=${mark('sig')}&expires=${mark('exp')}`,
  );
  await at(`/_platform/${segment('unknown')}`);
  await at('/_platform/webhooks/signed', {
    method: 'POST',
    rawBody: mark('hookbody'),
    headers: {
      'webhook-id': mark('hookid'),
      'webhook-timestamp': '1',
      'webhook-signature': `v1,${mark('sig')}`,
    },
  });
  await at('/_platform/webhooks/signed', { method: 'POST', rawBody: mark('unsigned') });
  await at(`/_platform/webhooks/${segment('hookname')}`, {
    method: 'POST',
    rawBody: mark('hook2'),
  });
  await at('/_platform/webhooks/open', { method: 'GET' });

  const events = await sql<{
    row: string;
  }>`select row_to_json(e)::text as row from app_events e`.execute(h.deps.db);
  const inEvents = events.rows
    .map((r) => r.row)
    .filter((r) => r.includes(MARK) || r.includes(PATH));
  assert.equal(inEvents, [], 'request data copied into events');
  assert.ok(
    lines.length > 20,
    `the debug log was captured: ${lines.length} lines\n${lines.join('\n')}`,
  );
  const inLog = lines.filter((l) => {
    const { path, ...rest } = JSON.parse(l) as { msg: string; path?: string };
    return (
      JSON.stringify(rest).includes(PATH) ||
      JSON.stringify(rest).includes(MARK) ||
      (rest.msg !== 'request' && path?.includes(PATH)) ||
      path?.includes(MARK)
    );
  });
  assert.equal(inLog, [], 'request data copied into the process log');
});

test('request values app code passes to platform calls get clear errors, and no event repeats them', async () => {
  const app = await publish();
  const r = await h.call('GET', `/probe?m=${mark('probe')}`, { host: app.host });
  assert.is(r.status, 200, r.text);
  const out = r.body as Record<string, { ok?: unknown; code?: string; message?: string }>;
  // NUL cannot be stored in Postgres text: a clear error for a value, nothing found for an id; never an internal error
  assert.is(out.nulField!.code, 'invalid_value');
  assert.match(out.nulField!.message!, 'NUL');
  assert.is(out.nulWhere!.code, 'invalid_value');
  assert.is(out.nulUpdate!.code, 'not_found');
  assert.equal(out.nulGet, { ok: null });
  assert.equal(out.nulDelete, { ok: { deleted: false } });
  assert.equal(out.nulFileDelete, { ok: { deleted: false } });
  assert.is(out.nulSignedUrl!.code, 'not_found');
  for (const [k, v] of Object.entries(out))
    assert.is.not(v.code, 'internal_error', `${k}: ${v.message}`);
  assert.is(out.unknownJob!.code, 'job_not_declared');
  assert.equal(
    lines.filter((l) => l.includes('platform call failed')),
    [],
    'no platform call failed',
  );
  const events = await sql<{
    row: string;
  }>`select row_to_json(e)::text as row from app_events e where app_id = ${app.appId}`.execute(
    h.deps.db,
  );
  assert.ok(
    events.rows.some((e) => e.row.includes('job.enqueue_failed')),
    'the failed enqueue is an event',
  );
  assert.equal(
    events.rows.map((e) => e.row).filter((e) => e.includes(MARK)),
    [],
    'no request value in any event',
  );
});

test.after(() => h.close());
test.run();
