import { sign as githubSign } from '@octokit/webhooks-methods';
import { run, type Runner } from 'graphile-worker';
import { Webhook } from 'standardwebhooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { eventsOf as eventsOfApp } from '../_lib/apps.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const u = await newUser(h);
const key = u.api_key;
const WHSEC = `whsec_${Buffer.from('a-very-secret-signing-key-123456').toString('base64')}`;
const GH_SECRET = 'github-shared-secret';
let runner: Runner;

const SERVER = `export default {
  async webhook(event, ctx) {
    ctx.log.info('hook', { name: event.webhook_name, provider: event.provider, id: event.delivery_id, json: event.json, headerNames: Object.keys(event.headers).sort(), hasBody: typeof event.body === 'string', at: typeof event.received_at });
    return Response.json({ thanks: event.webhook_name }, { status: 200 });
  },
  async job(event, ctx) { ctx.log.info('job got webhook', { name: event.payload.webhook_name, json: event.payload.json, source: event.job_name }); },
};`;

const RESOURCES = {
  secrets: { required: ['HOOK_SECRET', 'GH_SECRET', 'RAW_SECRET'] },
  jobs: { ingest: {} },
  webhooks: {
    signed: { provider: 'generic_hmac', secret: 'HOOK_SECRET' },
    raw: { provider: 'generic_hmac', secret: 'RAW_SECRET' },
    github: { provider: 'code_host', secret: 'GH_SECRET' },
    open: { provider: 'none' },
    queued: { provider: 'generic_hmac', secret: 'HOOK_SECRET', deliver_to: 'job:ingest' },
  },
};

async function setup(source = SERVER) {
  const first = await h.call('PUT', '/v0/apps', { key, body: site() });
  const appId = first.body.app_id as string;
  for (const [n, v] of [
    ['HOOK_SECRET', WHSEC],
    ['GH_SECRET', GH_SECRET],
    ['RAW_SECRET', 'plain-raw-secret'],
  ])
    await h.call('PUT', `/v0/apps/${appId}/secrets/${n}`, { key, body: { value: v } });
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
    resources: RESOURCES,
  });
  const r = await h.call('PUT', `/v0/apps/${appId}`, { key, body });
  assert.is(r.body.status, 'published', r.text);
  return { appId, host: `${appId}.apps.localhost` };
}

const post = (host: string, name: string, payload: string, headers: Record<string, string>) =>
  h.call('POST', `/_platform/webhooks/${name}`, {
    host,
    rawBody: payload,
    headers: { 'content-type': 'application/json', ...headers },
  });
function standard(
  secret: string,
  payload: string,
  id = `msg_${Math.random().toString(36).slice(2)}`,
  at = new Date(),
) {
  const wh = secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(secret, { format: 'raw' });
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': wh.sign(id, at, payload),
  };
}
const eventsOf = (appId: string, type: string) => eventsOfApp(h, key, appId, type);

test.before(async () => {
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
});

test('generic_hmac (Standard Webhooks): a valid delivery reaches webhook(event, ctx) and its response goes back', async () => {
  const a = await setup();
  const payload = JSON.stringify({ type: 'invoice.paid', amount: 5 });
  const r = await post(a.host, 'signed', payload, standard(WHSEC, payload, 'msg_1'));
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { thanks: 'signed' });
  const log = (await eventsOf(a.appId, 'runtime.log.info'))[0]!;
  assert.equal(log.metadata.json, { type: 'invoice.paid', amount: 5 });
  assert.is(log.metadata.id, 'msg_1');
  assert.is(log.metadata.provider, 'generic_hmac');
  assert.not.ok(
    log.metadata.headerNames.includes('webhook-signature'),
    'signature headers are removed',
  );
  assert.ok(log.metadata.headerNames.includes('webhook-id'));
  assert.is((await eventsOf(a.appId, 'webhook.received')).length, 1);
  assert.is((await eventsOf(a.appId, 'webhook.delivered'))[0]!.metadata.status, 200);
  // The raw-secret form, and several signatures of which one matches.
  const raw = standard('plain-raw-secret', payload);
  assert.is((await post(a.host, 'raw', payload, raw)).status, 200);
  const several = standard(WHSEC, payload);
  several['webhook-signature'] =
    `v1,${Buffer.alloc(32).toString('base64')} ${several['webhook-signature']}`;
  assert.is((await post(a.host, 'signed', payload, several)).status, 200);
});

test('missing, wrong and stale signatures are 401 with webhook.rejected and the reason', async () => {
  const a = await setup();
  const payload = '{"x":1}';
  const missing = await post(a.host, 'signed', payload, {});
  assert.is(missing.status, 401);
  assert.is(missing.body.error.code, 'unauthorized');
  const wrong = await post(
    a.host,
    'signed',
    payload,
    standard(`whsec_${Buffer.from('another-key-entirely-0123456789').toString('base64')}`, payload),
  );
  assert.is(wrong.status, 401);
  const tampered = await post(a.host, 'signed', '{"x":2}', standard(WHSEC, payload));
  assert.is(tampered.status, 401);
  const stale = await post(
    a.host,
    'signed',
    payload,
    standard(WHSEC, payload, 'msg_old', new Date(Date.now() - 10 * 60 * 1000)),
  );
  assert.is(stale.status, 401);
  const reasons = (await eventsOf(a.appId, 'webhook.rejected'))
    .map((e) => e.metadata.reason)
    .sort();
  assert.equal(reasons, ['missing', 'stale', 'wrong', 'wrong']);
  assert.is((await eventsOf(a.appId, 'webhook.received')).length, 0, 'nothing reached the app');
});

test('code_host (GitHub): X-Hub-Signature-256 over the raw body', async () => {
  const a = await setup();
  const payload = JSON.stringify({ action: 'opened', number: 7 });
  const ok = await post(a.host, 'github', payload, {
    'x-hub-signature-256': await githubSign(GH_SECRET, payload),
    'x-github-delivery': 'gh-1',
    'x-github-event': 'pull_request',
  });
  assert.is(ok.status, 200, ok.text);
  const bad = await post(a.host, 'github', payload, {
    'x-hub-signature-256': await githubSign('wrong', payload),
    'x-github-delivery': 'gh-2',
  });
  assert.is(bad.status, 401);
  const none = await post(a.host, 'github', payload, { 'x-github-delivery': 'gh-3' });
  assert.is(none.status, 401);
});

test('deliveries are de-duplicated by delivery id; a failed delivery can be retried', async () => {
  const a = await setup();
  const payload = '{"n":1}';
  const headers = standard(WHSEC, payload, 'msg_dupe');
  assert.is((await post(a.host, 'signed', payload, headers)).status, 200);
  const again = await post(a.host, 'signed', payload, headers);
  assert.is(again.status, 200);
  assert.is(again.body.duplicate, true);
  assert.is((await eventsOf(a.appId, 'webhook.delivered')).length, 1);
  const gh = {
    'x-hub-signature-256': await githubSign(GH_SECRET, payload),
    'x-github-delivery': 'same-id',
  };
  await post(a.host, 'github', payload, gh);
  assert.is((await post(a.host, 'github', payload, gh)).body.duplicate, true);
  // No webhook() handler: 500, webhook.handler_missing, and the id is not burnt.
  const b = await setup(`export default { fetch() { return new Response('x') } };`);
  const h1 = standard(WHSEC, payload, 'msg_retry');
  const fail = await post(b.host, 'signed', payload, h1);
  assert.is(fail.status, 500);
  assert.is(fail.body.error.code, 'runtime_error');
  assert.is((await eventsOf(b.appId, 'webhook.handler_missing')).length, 1);
  const retry = await post(b.host, 'signed', payload, h1);
  assert.is.not(retry.body?.duplicate, true, 'a failed delivery is not recorded as seen');
});

test('provider none needs no signature; unknown webhooks are 404; other methods 405; bodies over 1 MiB 413', async () => {
  const a = await setup();
  assert.is((await post(a.host, 'open', '{}', {})).status, 200);
  assert.is((await post(a.host, 'nope', '{}', {})).status, 404);
  const get = await h.call('GET', '/_platform/webhooks/open', { host: a.host });
  assert.is(get.status, 405);
  const big = 'x'.repeat(1024 * 1024 + 1);
  const tooBig = await post(a.host, 'open', big, {});
  assert.is(tooBig.status, 413);
  assert.ok(
    (await eventsOf(a.appId, 'webhook.rejected')).some((e) => e.metadata.reason === 'too_large'),
  );
});

test('deliveries beyond the per-app rate are refused with 429 and webhook.rejected', async () => {
  const a = await setup(`export default { webhook() {} };`);
  const other = await setup(`export default { webhook() {} };`);
  const statuses = await Promise.all(
    Array.from({ length: 140 }, () => post(a.host, 'open', '{}', {}).then((r) => r.status)),
  );
  assert.ok(statuses.filter((s) => s === 429).length > 0, 'some deliveries are rate limited');
  assert.ok(statuses.filter((s) => s === 200).length >= 100, 'the burst allowance is delivered');
  const limited = await post(a.host, 'open', '{}', {});
  assert.ok(limited.status === 429 || limited.status === 200);
  assert.is((await post(other.host, 'open', '{}', {})).status, 200, 'another app is not affected');
  assert.ok(
    (await eventsOf(a.appId, 'webhook.rejected')).some((e) => e.metadata.reason === 'rate_limited'),
  );
});

test('delivery to a job answers 202 at once and the job runs with the event as payload', async () => {
  const a = await setup();
  const payload = JSON.stringify({ order: 42 });
  const r = await post(a.host, 'queued', payload, standard(WHSEC, payload, 'msg_job'));
  assert.is(r.status, 202, r.text);
  assert.match(r.body.job_id, /^job_/);
  assert.is((await eventsOf(a.appId, 'webhook.queued'))[0]!.metadata.job_id, r.body.job_id);
  for (let i = 0; i < 100 && !(await eventsOf(a.appId, 'job.succeeded')).length; i++)
    await new Promise((res) => setTimeout(res, 50));
  const ran = (await eventsOf(a.appId, 'runtime.log.info')).find(
    (e) => e.message === 'job got webhook',
  );
  assert.ok(ran, 'the job ran');
  assert.equal(ran.metadata, { name: 'queued', json: { order: 42 }, source: 'ingest' });
});

test.after(async () => {
  await runner.stop();
  await h.close();
});
test.run();
