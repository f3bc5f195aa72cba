/**
 * No raw token of any kind is at rest. Every bearer secret a person or program is handed (sign-in
 * and invitation links, the pending sign-up cookie, a console session, the device code and the key
 * it brings, API keys, app-user sessions, verification links and invites, preview grants) is
 * collected as the receiver sees it; then every row of every table, the job queue included, and
 * every file of a backup archive are searched for each one. Mail waiting to be sent or retried
 * holds no link, and mail that failed for good is not kept.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import * as tar from 'tar';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeBackup } from '../../src/backups/dump.ts';
import { waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser, uniqueEmail, type Called } from '../_lib/harness.ts';
import { linkToken, startSmtp, startWorker } from '../_lib/mail.ts';

const smtp = await startSmtp();
const h = await createHarness({ SMTP_URL: smtp.url, PLATFORM_SANDBOX_WORKERS: '1' });
let worker = await startWorker(h);
const CONSOLE = h.config.hosts.console;
const scratch = path.resolve('.data', 'test-scratch', `tokens-${process.pid}`);
let peer = 0;
/** a link's token, whoever it was for: none is ever written down */
const LINK = /token=[A-Za-z0-9_-]{43}/;

/** Every secret handed out, by what it is. */
const handed: [string, string][] = [];
const keep = (what: string, token: string | undefined | null) => {
  assert.ok(token && token.length >= 20, `${what} was handed out`);
  handed.push([what, token!]);
  return token!;
};
const cookieValue = (r: Called, name: string) => {
  const set = r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return set?.split(';')[0]?.slice(name.length + 1);
};
const onConsole = (
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
) => h.call(method, p, { host: CONSOLE, body, headers, client: `127.0.5.${(peer++ % 250) + 1}` });

test('hand out every kind of token, as people and programs receive them', async () => {
  const owner = await newUser(h, 'owner');
  keep('an API key', owner.api_key);

  // sign-up through a link: the link, the pending sign-up cookie, the session
  const email = uniqueEmail('tokens');
  assert.is((await onConsole('POST', '/v0/auth/email/request', { email })).status, 202);
  const link = keep('a sign-up link', linkToken((await smtp.next(email)).text));
  const confirmed = await onConsole('POST', '/v0/auth/email/confirm', { token: link });
  const pending = keep(
    'a pending sign-up cookie',
    cookieValue(confirmed, '__Host-platform_pending_signup'),
  );
  const done = await onConsole(
    'POST',
    '/v0/auth/signup/complete',
    { username: `tok${process.pid}` },
    { cookie: `__Host-platform_pending_signup=${pending}` },
  );
  assert.is(done.status, 201, done.text);
  const session = keep('a console session', cookieValue(done, '__Host-platform_session'));
  const csrf = done.body.csrf_token as string;
  const signedIn = { cookie: `__Host-platform_session=${session}`, 'x-platform-csrf': csrf };

  // a sign-in link for someone who has an account
  assert.is((await onConsole('POST', '/v0/auth/email/request', { email })).status, 202);
  keep('a sign-in link', linkToken((await smtp.next(email)).text));

  // an invitation into an account
  const invitee = uniqueEmail('invitee');
  const invited = await h.call('POST', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
    body: { email: invitee, role: 'admin' },
  });
  assert.is(invited.status, 201, invited.text);
  keep('an invitation link', linkToken((await smtp.next(invitee)).text));

  // the CLI's device flow: the device code, and the key the poll hands over
  const start = await h.call('POST', '/v0/auth/device/start', {
    body: { client_name: 'cli' },
    client: '127.0.6.1',
  });
  keep('a device code', start.body.device_code);
  const approved = await onConsole(
    'POST',
    '/v0/auth/device/approve',
    { user_code: start.body.user_code },
    signedIn,
  );
  assert.is(approved.status, 200, approved.text);
  const polled = await h.call('POST', '/v0/auth/device/poll', {
    body: { device_code: start.body.device_code },
    client: '127.0.6.1',
  });
  keep('a device-flow API key', polled.body.api_key);

  // an app with users: a session, a verification link, an invite; and a preview grant
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file(
        'server.js',
        'export default { fetch() { return new Response("ok"); } };',
        'text/javascript',
      ),
    ],
    resources: { auth: { mode: 'app_users', public_signup: true, email_verification: true } },
  });
  const app = await h.call('PUT', '/v0/apps', { key: owner.api_key, body });
  assert.is(app.status, 200, app.text);
  const appId = app.body.app_id as string;
  const host = `${appId}.apps.localhost`;
  const signup = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'member@example.com', password: 'a long password' },
  });
  assert.is(signup.status, 201, signup.text);
  keep('an app-user session', cookieValue(signup, '__Host-platform_app_session'));
  keep(
    'an app-user verification link',
    /\/_platform\/auth\/verify#token=([A-Za-z0-9_-]{43})/.exec(
      (await smtp.next('member@example.com')).text,
    )?.[1],
  );
  const invite = await h.call('POST', `/v0/apps/${appId}/admin-invites`, {
    key: owner.api_key,
    body: { email: 'guest@example.com' },
  });
  assert.is(invite.status, 200, invite.text);
  keep('an app invite', /#token=([A-Za-z0-9_-]{43})/.exec(invite.body.invite_url)?.[1]);
  const preview = await h.call('PUT', `/v0/apps/${appId}?preview=true`, {
    key: owner.api_key,
    body,
  });
  keep('a preview grant', new URL(preview.body.preview.url).searchParams.get('grant'));
});

test('mail that cannot be sent waits without its link, and is dropped after its last attempt', async () => {
  await worker.stop();
  const away = uniqueEmail('unsent');
  assert.is((await onConsole('POST', '/v0/auth/email/request', { email: away })).status, 202);
  const { rows } = await h.deps.pool.query<{ id: string; payload: { to: string } }>(
    `select j.id, j.payload from graphile_worker._private_jobs j
     join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'platform_email'`,
  );
  const queued = rows.find((r) => r.payload.to === away);
  assert.ok(queued, 'the message is queued');
  assert.not.match(
    JSON.stringify(queued!.payload),
    /token=[A-Za-z0-9_-]{43}/,
    'the queue holds no link',
  );
  // its last attempt, now, against a mail server that is not there
  await h.deps.pool.query(
    'update graphile_worker._private_jobs set attempts = max_attempts - 1, run_at = now() where id = $1',
    [queued!.id],
  );
  const closed = await startSmtp();
  await closed.close();
  const gone = await createHarness({ SMTP_URL: closed.url });
  worker = await startWorker(gone);
  await waitFor(async () => {
    const left = await h.deps.pool.query(
      'select 1 from graphile_worker._private_jobs where id = $1',
      [queued!.id],
    );
    return left.rows.length === 0;
  }, 20_000);
  await worker.stop();
  await gone.close();
  // and one left waiting while everything is searched
  const later = uniqueEmail('waiting');
  assert.is((await onConsole('POST', '/v0/auth/email/request', { email: later })).status, 202);
});

test('no table and no backup file holds any of them', async () => {
  const found: string[] = [];
  const { rows: tables } = await h.deps.pool.query<{ schema: string; name: string }>(
    `select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'r' and n.nspname in ('public', 'graphile_worker') order by 1, 2`,
  );
  assert.ok(tables.length > 40);
  for (const t of tables) {
    const { rows } = await h.deps.pool.query<{ row: string }>(
      `select t::text as row from "${t.schema}"."${t.name}" t`,
    );
    const text = rows.map((r) => r.row).join('\n');
    for (const [what, token] of handed)
      if (text.includes(token)) found.push(`${what} in ${t.schema}.${t.name}`);
    if (LINK.test(text)) found.push(`a link in ${t.schema}.${t.name}`);
  }
  assert.equal(found, [], 'no table holds a raw token');

  const archive = path.join(scratch, 'backup.tar.gz');
  await writeBackup({ databaseUrl: process.env.TEST_DATABASE_URL!, config: h.config }, archive);
  const unpacked = path.join(scratch, 'unpacked');
  await rm(unpacked, { recursive: true, force: true });
  await mkdir(unpacked, { recursive: true });
  await tar.x({ file: archive, cwd: unpacked });
  const files = (await readdir(unpacked, { recursive: true, withFileTypes: true })).filter((d) =>
    d.isFile(),
  );
  assert.ok(files.length > 40, 'the archive has a file per table');
  for (const f of files) {
    const text = await readFile(path.join(f.parentPath, f.name), 'utf8');
    for (const [what, token] of handed)
      if (text.includes(token)) found.push(`${what} in ${f.name}`);
    if (LINK.test(text)) found.push(`a link in ${f.name}`);
  }
  assert.equal(found, [], 'no backup file holds a raw token');
  assert.is(handed.length, 12, handed.map(([w]) => w).join(', '));
});

test.after(async () => {
  await worker.stop().catch(() => {});
  await h.close();
  await smtp.close();
  await rm(scratch, { recursive: true, force: true });
});
test.run();
