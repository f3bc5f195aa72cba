/** Every node shares one secrets key: a process with another key refuses to start; a secret that does not open is an error, never empty. */
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { boot } from '../../src/boot.ts';
import { createLogger } from '../../src/logger.ts';
import { seal, secretAad } from '../../src/secrets/crypto.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser, testConfig } from '../_lib/harness.ts';

const h = await createHarness();
const silent = createLogger('silent');
const start = (key: string) =>
  boot(testConfig({ PLATFORM_SECRETS_KEY: key }), { log: silent, poolSize: 2 });

test('a second process with another key refuses to start, naming PLATFORM_SECRETS_KEY', async () => {
  const keyA = h.config.secretsKey!;
  const first = await start(keyA);
  await first.close();
  const other = randomBytes(32).toString('hex');
  try {
    const wrong = await start(other);
    await wrong.close();
    assert.unreachable('started with the wrong key');
  } catch (err) {
    assert.match((err as Error).message, 'PLATFORM_SECRETS_KEY does not match');
  }
  const again = await start(keyA);
  await again.close();
});

test('a database with secrets and no check yet is checked against a real secret', async () => {
  const u = await newUser(h);
  const app = await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  await h.call('PUT', `/v0/apps/${app.body.app_id}/secrets/API_TOKEN`, {
    key: u.api_key,
    body: { value: 'v1-value' },
  });
  await h.deps.db.deleteFrom('secrets_key_check').execute();
  try {
    await (await start(randomBytes(32).toString('hex'))).close();
    assert.unreachable('started with the wrong key');
  } catch (err) {
    assert.match((err as Error).message, 'PLATFORM_SECRETS_KEY');
  }
  assert.is(
    (await h.deps.db.selectFrom('secrets_key_check').selectAll().execute()).length,
    0,
    'the wrong key was not recorded',
  );
  await (await start(h.config.secretsKey!)).close();
  assert.is((await h.deps.db.selectFrom('secrets_key_check').selectAll().execute()).length, 1);
});

test('a secret that does not open reads as absent and records an error event, never an empty value', async () => {
  const u = await newUser(h);
  const server = `export default { fetch(req, ctx) { const v = ctx.secrets.get('BROKEN'); return Response.json({ type: typeof v, value: v ?? null }); } };`;
  const app = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [file('public/index.html', 'hi'), file('server.js', server, 'text/javascript')],
    }),
  });
  const appId = app.body.app_id;
  // a row sealed with a foreign key, as a node with the wrong key would have written it
  await h.deps.db
    .insertInto('app_secrets')
    .values({
      app_id: appId,
      name: 'BROKEN',
      sealed: seal(randomBytes(32), secretAad(appId, 'BROKEN'), 'x-value'),
    })
    .execute();
  // a row another node writes reaches this one's caches through the change feed's signal
  h.deps.signals.secretsChanged(appId);
  const r = await h.call('GET', '/read', { host: `${appId}.apps.localhost` });
  assert.equal(r.body, { type: 'undefined', value: null });
  let events: { message: string }[] = [];
  for (let i = 0; i < 50 && !events.length; i++) {
    events = (
      await h.call('GET', `/v0/apps/${appId}/events?type=runtime.log.error`, { key: u.api_key })
    ).body.events;
    if (!events.length) await new Promise((res) => setTimeout(res, 50));
  }
  assert.match(events[0]!.message, 'Secret(s) BROKEN could not be decrypted');
});

test.after(() => h.close());
test.run();
