/**
 * A first publish of an app that requires a secret: at a terminal, `platform publish` asks for the
 * value (input hidden), sets it and publishes again, one command, the app live; without a
 * terminal it keeps exit 3 and its message. The API's republish makes a new release from the
 * stored one, only for a release waiting for secrets.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitFor } from '../_lib/apps.ts';
import { BIN, cliFor, writeSite } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `publish-secrets-${process.pid}`);
await mkdir(work, { recursive: true });
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const MANIFEST = {
  app: { name: 'Needs a secret' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
  resources: { secrets: { required: ['GREETING'] } },
};
const site = (name: string) =>
  writeSite(work, name, MANIFEST, {
    'public/index.html': 'static',
    'server.js':
      "export default { fetch(req, ctx) { return new Response('hello ' + ctx.GREETING) } };",
  });

test('not at a terminal: stored, exit 3, the message says what to do', async () => {
  const r = await cli(['publish', await site('plain')]);
  assert.is(r.code, 3, r.stderr);
  assert.match(r.stdout, 'Missing secrets: GREETING');
  assert.match(r.stdout, 'platform secrets set GREETING');
});

test('at a terminal: asks for the secret, hidden, sets it, publishes again: live in one command', async () => {
  const dir = await site('tty');
  // `script` gives the CLI a terminal; its input is what a person types at the prompt
  const env = {
    ...process.env,
    PLATFORM_API_URL: live.url,
    PLATFORM_API_KEY: u.api_key,
    XDG_CONFIG_HOME: path.join(work, 'config'),
    NO_COLOR: '1',
  };
  const child = spawn(
    'script',
    ['-qfec', `${process.execPath} ${BIN} publish ${dir}`, '/dev/null'],
    {
      cwd: work,
      env,
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  await waitFor(async () => out.includes('Value for GREETING (input hidden)'), 60_000).catch(() => {
    throw new Error(`no prompt:\n${out}`);
  });
  child.stdin.write('bonjour-secret-value\r');
  const code = await exited;
  assert.is(code, 0, out);
  assert.match(out, 'GREETING set');
  assert.match(out, 'published again as rel_');
  assert.match(out, /status\s+live/);
  assert.not.match(out, 'bonjour-secret-value', 'the value is never shown');
  const appId = /app\s+([a-z0-9]{12,24})/.exec(out)![1]!;
  const served = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.is(served.text, 'hello bonjour-secret-value');
  const releases = await h.api('GET /v0/apps/{app_id}/releases', {
    key: u.api_key,
    params: { app_id: appId },
  });
  assert.equal(
    releases.releases.map((r) => r.activation_status),
    ['live', 'pending_secrets'],
    'the stored release stays as it was; a new one went live',
  );
});

test('republish over the API: only a release waiting for secrets, and it is evaluated again', async () => {
  const r = await cli(['publish', await site('api'), '--json']);
  const stored = JSON.parse(r.stdout) as { app_id: string; release_id: string };
  const params = { app_id: stored.app_id, release_id: stored.release_id };
  const still = await h.api('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
    key: u.api_key,
    params,
  });
  assert.is(still.activation.status, 'pending_secrets', 'still missing: stored again');
  await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
    key: u.api_key,
    params: { app_id: stored.app_id, name: 'GREETING' },
    body: { value: 'hi' },
  });
  const again = await h.api('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
    key: u.api_key,
    params,
  });
  assert.is(again.activation.status, 'live');
  assert.is(again.previous_release_id, null);
  const served = await h.call('GET', '/run', { host: `${stored.app_id}.apps.localhost` });
  assert.is(served.text, 'hello hi');
  const refused = await h.answer('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
    key: u.api_key,
    params: { app_id: stored.app_id, release_id: again.release_id },
  });
  assert.is(refused.status, 400);
  assert.match(refused.error!.message, /Only a release waiting for secrets/);
});

test('a waiting release older than the live one never goes live without the rollback confirmation', async () => {
  // v1 waits for GREETING; v2 (needing nothing) goes live; then GREETING is set
  const first = await cli(['publish', await site('older'), '--json']);
  const waiting = JSON.parse(first.stdout) as { app_id: string; release_id: string };
  const plain = await h.api('PUT /v0/apps/{app_id}', {
    key: u.api_key,
    params: { app_id: waiting.app_id },
    body: {
      app: { name: 'Needs a secret' },
      runtime: { static_root: 'public' },
      files: [
        {
          path: 'public/index.html',
          content_type: 'text/html',
          content_base64: Buffer.from('v2').toString('base64'),
        },
      ],
    } as never,
  });
  assert.is(plain.activation.status, 'live');
  const set = await cli(['secrets', 'set', 'GREETING', 'hi', '--app', waiting.app_id]);
  assert.is(set.code, 0, set.stderr);
  assert.not.match(set.stdout, 'was waiting for its secrets', 'no offer to put older code live');
  const params = { app_id: waiting.app_id, release_id: waiting.release_id };
  const refused = await h.answer('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
    key: u.api_key,
    params,
  });
  assert.is(refused.status, 409);
  assert.is(refused.error!.code, 'conflict');
  assert.match(refused.error!.message, /older than the live release .*confirm_older/);
  assert.equal(refused.error!.details, {
    release_id: waiting.release_id,
    live_release_id: plain.release_id,
  });
  const host = `${waiting.app_id}.apps.localhost`;
  assert.is((await h.call('GET', '/', { host })).text, 'v2', 'the newer release still serves');
  const cliRefused = await cli(['republish', waiting.release_id, '--app', waiting.app_id]);
  assert.is(cliRefused.code, 1);
  assert.match(cliRefused.stderr + cliRefused.stdout, /older than the live release/);
  const confirmed = await cli([
    'republish',
    waiting.release_id,
    '--confirm-older',
    '--app',
    waiting.app_id,
  ]);
  assert.is(confirmed.code, 0, confirmed.stderr);
  assert.match(confirmed.stdout, /live.*published again from/);
  assert.is((await h.call('GET', '/run', { host })).text, 'hello hi', 'older code, as asked');
});

test('setting the last missing secret offers the newest waiting release, and republish puts it live', async () => {
  const r = await cli(['publish', await site('offer'), '--json']);
  const stored = JSON.parse(r.stdout) as { app_id: string; release_id: string };
  const set = await cli(['secrets', 'set', 'GREETING', 'salut', '--app', stored.app_id]);
  assert.is(set.code, 0, set.stderr);
  assert.match(
    set.stdout,
    `${stored.release_id} was waiting for its secrets; they are all set now.`,
  );
  assert.match(set.stdout, `platform republish ${stored.release_id}`);
  const again = await cli(['republish', stored.release_id, '--app', stored.app_id]);
  assert.is(again.code, 0, again.stderr);
  assert.is(
    (await h.call('GET', '/run', { host: `${stored.app_id}.apps.localhost` })).text,
    'hello salut',
  );
});

test.after(async () => {
  await live.close();
  await h.close();
});
test.run();
