/**
 * A failing job never writes its payload to the process log: not the sign-in link and recipient of
 * a mail that could not be sent, not a secret value that app code put in a job's payload. The log
 * keeps the job's id, task, attempt and (redacted) error; the mail still goes out once the relay
 * is back.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { createLogger } from '../../src/logger.ts';
import { waitFor } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, freePort, newUser, uniqueEmail } from '../_lib/harness.ts';
import { linkToken, startSmtp, startWorker } from '../_lib/mail.ts';

const relayPort = await freePort(); // nothing listens there yet: the relay is down
const h = await createHarness({ SMTP_URL: `smtp://127.0.0.1:${relayPort}` });
const lines: string[] = [];
const worker = await startWorker(h, workerLogger(createLogger('debug', (l) => lines.push(l))));
const failures = (task: string) =>
  lines.filter((l) => l.includes('Failed task') && l.includes(task));

test('a mail the relay refuses leaves no link or address in the log, and is sent later', async () => {
  const email = uniqueEmail('relay-down');
  const r = await h.call('POST', '/v0/auth/email/request', {
    host: h.config.hosts.console,
    body: { email },
    client: '127.0.0.9',
  });
  assert.is(r.status, 202, r.text);
  await waitFor(async () => failures('platform_email').length > 0);
  const logged = lines.join('\n');
  assert.not.match(logged, email, 'the recipient is not logged');
  assert.not.match(logged, '/auth/confirm', 'the sign-in link is not logged');
  const line = JSON.parse(failures('platform_email')[0]!);
  assert.is(line.level, 'error');
  assert.equal(Object.keys(line.job).sort(), ['attempt', 'id', 'max_attempts', 'task']);
  assert.is(line.job.task, 'platform_email');
  assert.is(line.job.attempt, 1);

  const smtp = await startSmtp(relayPort); // the relay recovers; graphile-worker retries
  try {
    const mail = await smtp.next(email);
    assert.is(linkToken(mail.text).length, 43, 'the link arrives after all');
  } finally {
    await smtp.close();
  }
  assert.not.match(lines.join('\n'), email);
});

test("an app job's payload never reaches the log, whatever it holds", async () => {
  const SECRET = 'payload-secret-5c1e9b2d';
  const u = await newUser(h);
  const server = `export default {
    async fetch(req, ctx) {
      await ctx.jobs.enqueue('boom', { token: ctx.secrets.get('API_TOKEN'), note: 'kept out' });
      return new Response('queued');
    },
    async job(event, ctx) { throw new Error('job failed'); },
  };`;
  const bundle = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: { secrets: { required: ['API_TOKEN'] }, jobs: { boom: { max_attempts: 1 } } },
    files: [file('public/index.html', 'hi'), file('server.js', server, 'text/javascript')],
  });
  const appId = (await h.call('PUT', '/v0/apps', { key: u.api_key, body: bundle })).body.app_id;
  const set = await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, {
    key: u.api_key,
    body: { value: SECRET },
  });
  assert.is(set.status, 200, set.text);
  const published = await h.call('PUT', `/v0/apps/${appId}`, { key: u.api_key, body: bundle });
  assert.is(published.body.status, 'published', published.text);
  const q = await h.call('GET', '/enqueue', { host: `${appId}.apps.localhost` });
  assert.is(q.text, 'queued');
  await waitFor(async () => failures('app_job').length > 0);
  const logged = lines.join('\n');
  assert.not.match(logged, SECRET, 'no secret value');
  assert.not.match(logged, 'kept out', 'no payload at all');
  assert.match(failures('app_job')[0]!, '"task":"app_job"');
});

test.after(async () => {
  await worker.stop();
  await h.close();
});

test.run();
