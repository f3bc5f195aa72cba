/**
 * The first request after a publish finds the release warm: the instance that loaded the module
 * to check it at publish is kept as the release's first, set up as its calls are (ctx, the app's
 * secrets), so the first request answers as a cold start's would. How much sooner it answers is
 * `npm run bench:origin`'s "first request to a release".
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const key = owner.api_key;

const bundle = (version: string, resources?: unknown) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'static'),
      file(
        'server.js',
        `const token = process.env.TOKEN ?? null;
let calls = 0;
export default { fetch(req, ctx) {
  calls++;
  return Response.json({ version: '${version}', calls, release: ctx.app.release_id, token, auth: typeof ctx.auth });
} };`,
        'text/javascript',
      ),
    ],
    ...(resources ? { resources } : {}),
  });

/** Whether a sandbox worker holds the release already (only the publish's check could have put it there). */
const warm = (releaseId: string) => h.server.runtime.sandbox().holds(releaseId);

test('a new app: its first request runs on the instance the publish loaded', async () => {
  const r = await h.call('PUT', '/v0/apps', { key, body: bundle('v1') });
  assert.is(r.body.activation.status, 'live', r.text);
  const appId = r.body.app_id as string;
  assert.is(warm(r.body.release_id), true, 'warm before any request');
  const first = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.equal(first.body, {
    version: 'v1',
    calls: 1,
    release: r.body.release_id,
    token: null,
    auth: 'undefined',
  });
});

test('a new release: warm with the app’s secrets and its ctx, as a cold start would be', async () => {
  const r = await h.call('PUT', '/v0/apps', { key, body: bundle('v1') });
  const appId = r.body.app_id as string;
  await h.call('PUT', `/v0/apps/${appId}/secrets/TOKEN`, { key, body: { value: 's3cret' } });
  const next = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: bundle('v2', { auth: { mode: 'app_users' } }),
  });
  assert.is(next.body.activation.status, 'live', next.text);
  assert.is(warm(next.body.release_id), true);
  const first = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.equal(first.body, {
    version: 'v2',
    calls: 1,
    release: next.body.release_id,
    token: 's3cret',
    auth: 'object',
  });
});

test('a release that does not go live keeps no instance; a later request loads it normally', async () => {
  const r = await h.call('PUT', '/v0/apps', { key, body: bundle('v1') });
  const appId = r.body.app_id as string;
  const stored = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: bundle('v3', { secrets: { required: ['MISSING'] } }),
  });
  assert.is(stored.body.activation.status, 'pending_secrets');
  assert.is(warm(stored.body.release_id), false);
  // the live release still answers
  assert.is((await h.call('GET', '/run', { host: `${appId}.apps.localhost` })).body.version, 'v1');
});

test.after(() => h.close());
test.run();
