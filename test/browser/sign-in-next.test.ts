/**
 * `/sign-in?next=…` sends the browser back into the console after the mailed link is confirmed,
 * never to another site, however the value is spelled: each spelling browsers normalise into
 * another origin (backslash, tab, newline, `/\`, encoded forms, dot segments, absolute URLs) lands
 * on the console, in Chromium. The "other site" is a name under `.localhost`, on loopback.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createUser } from '../../src/users/service.ts';
import { launchChromium } from '../_lib/browser.ts';
import { createHarness, freePort, listen, uniqueEmail } from '../_lib/harness.ts';
import { startSmtp, startWorker } from '../_lib/mail.ts';

const port = await freePort();
const smtp = await startSmtp();
const h = await createHarness({ PORT: String(port), SMTP_URL: smtp.url });
const worker = await startWorker(h);
const live = await listen(h.server, port);
const CONSOLE = `http://console.localhost:${port}`;
const EVIL = `attacker.localhost:${port}`;
const browser = await launchChromium();

/** Signs a fresh user in from /sign-in?<query>; returns the URL the browser lands on. */
async function landingAfterSignIn(query: string): Promise<URL> {
  const email = uniqueEmail('next');
  await createUser(h.deps.db, { email, username: `n${Math.random().toString(36).slice(2, 10)}` });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${CONSOLE}/sign-in?${query}`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.getByText('Check your e-mail.').waitFor();
    const mail = await smtp.next(email);
    const link = /http:\/\/console\.localhost:\d+\/auth\/confirm#token=[A-Za-z0-9_-]{43}/.exec(
      mail.text,
    )![0];
    await page.goto(link);
    const left = page.waitForURL((u) => !u.pathname.startsWith('/auth/confirm'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await left;
    return new URL(page.url());
  } finally {
    await context.close();
  }
}

const hostile = [
  `/\\${EVIL}/x`,
  `/%5C${EVIL}/x`,
  `/\t/${EVIL}/x`,
  `/\n/${EVIL}/x`,
  `/\r\n/${EVIL}/x`,
  `\\\\${EVIL}/x`,
  `/\\/${EVIL}/x`,
  `//${EVIL}/x`,
  `/%2F${EVIL}/x`,
  `/.//${EVIL}/x`,
  `/./\\${EVIL}/x`,
  ` /\\${EVIL}/x`,
  `http://${EVIL}/x`,
  `http:${EVIL}/x`,
  `javascript:alert(1)`,
];

for (const next of hostile)
  test(`next=${JSON.stringify(next)} lands on the console`, async () => {
    const landed = await landingAfterSignIn(`next=${encodeURIComponent(next)}`);
    assert.is(landed.origin, CONSOLE, `landed on ${landed.href}`);
  });

test('a raw query spelling (%5C and %09 left for the browser to decode) lands on the console', async () => {
  for (const raw of [`/%5C${EVIL}/x`, `/%09/${EVIL}/x`, `/%5C%5C${EVIL}/x`]) {
    const landed = await landingAfterSignIn(`next=${raw}`);
    assert.is(landed.origin, CONSOLE, `${raw} landed on ${landed.href}`);
  }
});

test('a console path in next is where the user lands (the feature still works)', async () => {
  const landed = await landingAfterSignIn(`next=${encodeURIComponent('/keys?tab=1')}`);
  assert.is(landed.origin, CONSOLE);
  assert.is(landed.pathname + landed.search, '/keys?tab=1');
});

test.after(async () => {
  await browser.close();
  await worker.stop();
  await live.close();
  await smtp.close();
  await h.close();
});

test.run();
