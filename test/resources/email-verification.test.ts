import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser, type Harness } from '../_lib/harness.ts';
import { startSmtp, startWorker } from '../_lib/mail.ts';

const smtp = await startSmtp();

async function setup(h: Harness) {
  const u = await newUser(h);
  const r = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({
      app: { name: 'Verify me' },
      resources: { auth: { mode: 'app_users', public_signup: true, email_verification: true } },
    }),
  });
  const runner = await startWorker(h);
  return { host: `${r.body.app_id}.apps.localhost`, runner };
}

test('with SMTP_URL: sign-up sends a verification link by e-mail; following it marks the user verified', async () => {
  const h = await createHarness({
    SMTP_URL: smtp.url,
    PLATFORM_MAIL_FROM: 'noreply@platform.test',
  });
  const { host, runner } = await setup(h);
  const s = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'vera@example.com', password: 'a long password' },
  });
  assert.is(s.status, 201);
  assert.is(s.body.user.verified, false);
  const mail = await smtp.next('vera@example.com');
  assert.equal(mail.to, ['vera@example.com']);
  assert.is(smtp.received.length, 0, 'exactly one message reached the SMTP server');
  const text = mail.text;
  assert.match(text, 'Subject: Confirm your e-mail for Verify me');
  const link = /http:\/\/\S+\/_platform\/auth\/verify#token=([A-Za-z0-9_-]{43})/.exec(text);
  assert.ok(link, 'the message carries the link');
  const page = await h.call('GET', '/_platform/auth/verify', { host });
  assert.match(page.text, 'Confirm your e-mail');
  const v = await h.call('POST', '/_platform/auth/verify', { host, body: { token: link![1] } });
  assert.is(v.status, 200, v.text);
  assert.is(v.body.user.verified, true);
  const session = await h.call('GET', '/_platform/auth/session', {
    host,
    headers: { cookie: s.headers.get('set-cookie')!.split(';')[0]! },
  });
  assert.is(session.body.user.verified, true);
  const again = await h.call('POST', '/_platform/auth/verify', { host, body: { token: link![1] } });
  assert.is(again.body.error.code, 'invalid_verification', 'a link works once');
  await runner.stop();
  await h.close();
});

test('without SMTP_URL: the message lands in the development outbox', async () => {
  const h = await createHarness();
  const { host, runner } = await setup(h);
  await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'otto@example.com', password: 'a long password' },
  });
  let row;
  for (let i = 0; i < 100 && !row; i++) {
    row = await h.deps.db
      .selectFrom('dev_outbox')
      .selectAll()
      .where('to_address', '=', 'otto@example.com')
      .executeTakeFirst();
    if (!row) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(row, 'the outbox has the message');
  assert.match(row!.body, 'Confirm your e-mail address');
  assert.match(row!.body, '(the link: printed once in the terminal, not stored)');
  assert.not.match(row!.body, /token=[A-Za-z0-9_-]{43}/, 'the outbox keeps no link');
  await runner.stop();
  await h.close();
});

test.after(() => smtp.close());
test.run();
