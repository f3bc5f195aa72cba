/**
 * In a real browser (Debian's Chromium driven by playwright-core): sign up from the e-mail link,
 * then approve a device code that the real CLI, running as a subprocess, is waiting on; the CLI
 * then runs `platform whoami` with the key it received. SCREENSHOTS=<dir> keeps screenshots.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, freePort, listen, uniqueEmail } from '../_lib/harness.ts';
import { startSmtp, startWorker } from '../_lib/mail.ts';

const port = await freePort();
const smtp = await startSmtp();
const h = await createHarness({ PORT: String(port), SMTP_URL: smtp.url });
const worker = await startWorker(h);
const live = await listen(h.server, port);
const CONSOLE = `http://console.localhost:${port}`;
const work = path.resolve('.data', 'test-scratch', `browser-${process.pid}`);
const shots = process.env.SCREENSHOTS;
if (shots) await mkdir(shots, { recursive: true });

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) throw new Error(`The browser tests need Chromium at ${executablePath}: apt-get install chromium (or set CHROMIUM_PATH).`);
const browser: Browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP *.localhost 127.0.0.1'],
});
const context = await browser.newContext();
const page = await context.newPage();
const shot = async (name: string) => (shots ? void (await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true })) : undefined);

function cli(args: string[]): { child: ChildProcess; out: () => string; done: Promise<number> } {
  let out = '';
  const child = spawn(process.execPath, [path.resolve('src/cli/bin.mjs'), ...args], {
    cwd: work,
    env: { ...process.env, PLATFORM_API_URL: live.url, PLATFORM_API_KEY: '', XDG_CONFIG_HOME: path.join(work, 'config'), NO_COLOR: '1', DISPLAY: '', WAYLAND_DISPLAY: '', BROWSER: '' },
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return { child, out: () => out, done };
}

test('sign up from the e-mail link in Chromium; the session cookie is __Host-, Secure, HttpOnly, SameSite=Lax', async () => {
  const email = uniqueEmail('browser');
  await page.goto(`${CONSOLE}/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.getByText('Check your e-mail.').waitFor();
  await shot('1-sign-in-sent');

  const mail = await smtp.next(email);
  const link = /http:\/\/console\.localhost:\d+\/auth\/confirm#token=[A-Za-z0-9_-]{43}/.exec(mail.text)![0];
  await page.goto(link);
  await shot('2-confirm');
  assert.not.match(page.url(), 'token=', 'the token leaves the address bar');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${CONSOLE}/signup`);
  await page.getByLabel('Username').fill('browser-person');
  await page.getByLabel(/Account name/).fill('Browser Co');
  await shot('3-signup');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${CONSOLE}/`);
  await page.getByText(`Signed in as ${email}.`).waitFor();
  await page.getByText('Browser Co · owner').waitFor();
  await shot('4-home');

  const cookie = (await context.cookies(CONSOLE)).find((c) => c.name === '__Host-platform_session');
  assert.ok(cookie, 'Chromium kept the session cookie on http://console.localhost');
  assert.equal({ secure: cookie!.secure, httpOnly: cookie!.httpOnly, sameSite: cookie!.sameSite, path: cookie!.path, domain: cookie!.domain }, { secure: true, httpOnly: true, sameSite: 'Lax', path: '/', domain: 'console.localhost' });
  assert.is(await page.evaluate(() => document.cookie), '', 'page script cannot read it');
});

test('approve the device code the real CLI is waiting on; the CLI then runs whoami', async () => {
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const login = cli(['login', '--no-browser']);
  let code = '';
  for (let i = 0; i < 200 && !code; i++) {
    code = /\b([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})\b/.exec(login.out())?.[1] ?? '';
    if (!code) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(code, `the CLI printed a code: ${login.out()}`);
  const url = /(http:\/\/console\.localhost:\d+\/device\?user_code=\S+)/.exec(login.out())![1]!;

  await page.goto(url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: /Allow platform CLI on .+ to use your account\?/ }).waitFor();
  await shot('5-device');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('Approved. Return to your terminal').waitFor();
  await shot('6-approved');

  assert.is(await login.done, 0, login.out());
  assert.match(login.out(), '✔ logged in');
  const whoami = cli(['whoami']);
  assert.is(await whoami.done, 0, whoami.out());
  assert.match(whoami.out(), 'Browser Co');
  assert.match(whoami.out(), 'owner');

  // signing out in the browser leaves the CLI's key working
  await page.goto(`${CONSOLE}/`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${CONSOLE}/sign-in`);
  const still = cli(['whoami']);
  assert.is(await still.done, 0, still.out());
  const out = cli(['logout', '--revoke']);
  assert.is(await out.done, 0, out.out());
  const after = await h.deps.db.selectFrom('api_keys').select(['name', 'revoked_at']).where('name', 'like', 'platform CLI on %').execute();
  assert.ok(after.length === 1 && after[0]!.revoked_at, 'logout --revoke revoked the key');
});

test.after(async () => {
  await browser.close();
  await live.close();
  await worker.stop();
  await h.close();
  await smtp.close();
  await rm(work, { recursive: true, force: true });
});
test.run();
