/**
 * The console's Operator section in Chromium: the operator finds an account, changes its plan,
 * suspends it and lifts it, takes an app down, reads the server's health and the action log; a
 * user who is not an operator sees no Operator link and gets a refusal on the page. Screenshots of
 * each page at 1280 and 390 px go to SCREENSHOTS=<dir> (default .data/screenshots).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { site } from '../_lib/bundles.ts';
import { consoleContext, shootWidths, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';
import { startWorker } from '../_lib/mail.ts';
import path from 'node:path';
import { rm } from 'node:fs/promises';

const {
  port,
  h,
  browser,
  console: CONSOLE,
  shots,
  close,
} = await consoleTour({
  PLATFORM_PLANS_FILE: '',
  PLATFORM_BACKUP_TO: path.resolve('.data', 'test-scratch', `console-backups-${process.pid}`),
});
const worker = await startWorker(h);

// this file's database is fresh: the first user is the install's operator
const operator = await newUser(h, 'operator');
const customer = await newUser(h, 'customer');
const app = await h.api('PUT /v0/apps', { key: customer.api_key, body: site() as never });
const appHost = `${app.app_id}.apps.localhost`;

const errors: string[] = [];
async function signedIn(userId: string): Promise<Page> {
  const page = await (await consoleContext(browser, h.deps.db, userId, port)).newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return page;
}
const shoot = (page: Page, name: string) => shootWidths(page, shots, name);

test('an operator runs the server from the console', async () => {
  const page = await signedIn(operator.user_id);
  await page.goto(`${CONSOLE}/`);
  await page.locator('#operator-note').waitFor();
  const link = page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Operator' });
  await link.click();
  await page.waitForURL(`${CONSOLE}/operator`);
  await page.getByRole('heading', { name: 'Accounts, newest first' }).waitFor();
  await shoot(page, 'operator-accounts');

  await page.getByLabel('Find an account').fill(customer.account_id);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: `Accounts matching "${customer.account_id}"` }).waitFor();
  const rows = page.locator('#content tbody tr');
  assert.is(await rows.count(), 1);
  await rows.getByRole('link').click();
  await page.waitForURL(`${CONSOLE}/operator/accounts/${customer.account_id}`);
  await page.locator('#apps table').waitFor();

  await page.getByLabel('Plan', { exact: true }).selectOption('business');
  await page.getByRole('button', { name: 'Set plan' }).click();
  await page.getByText('The account is on business.').waitFor();

  await page.getByLabel(/^Reason/).fill('phishing report 42');
  await page.getByRole('button', { name: 'Suspend the account' }).click();
  await page.getByText('The account is suspended.').waitFor();
  await page.getByText('phishing report 42').waitFor();
  const refused = await h.call('PUT', '/v0/apps', { key: customer.api_key, body: site() });
  assert.is(refused.body.error?.code, 'account_suspended', 'the customer is suspended for real');
  await shoot(page, 'operator-account');
  await page.getByRole('button', { name: 'Lift the suspension' }).click();
  await page.getByText('The suspension is lifted.').waitFor();

  page.once('dialog', (d) => void d.accept('DMCA notice 7'));
  await page.getByRole('button', { name: 'Take down' }).click();
  await page.getByText(' is taken down.', { exact: false }).waitFor();
  assert.is((await h.call('GET', '/', { host: appHost })).status, 451);
  await page.getByRole('button', { name: 'Lift takedown' }).click();
  await page.getByText('Lifted takedown').waitFor();
  assert.is((await h.call('GET', '/', { host: appHost })).status, 200);

  await page.getByRole('link', { name: 'Health' }).click();
  await page.getByRole('heading', { name: 'Job queue' }).waitFor();
  await page.getByText(/blobs in postgres/).waitFor();
  await shoot(page, 'operator-health');

  await page.getByRole('link', { name: 'Backups' }).click();
  await page.getByText('No backup yet.').waitFor();
  await page.getByRole('button', { name: 'Back up now' }).click();
  await page.locator('#content table').getByText('succeeded').waitFor({ timeout: 30_000 });
  const backups = await page.locator('#content table').innerText();
  assert.match(backups, /Console/, 'who started it');
  assert.match(backups, /\d+(\.\d+)? (B|KiB|MiB)/, 'its size');
  await page.getByText('npm run admin -- restore').waitFor();
  await shoot(page, 'operator-backups');

  await page.getByRole('link', { name: 'Actions' }).click();
  const table = page.locator('#content table');
  await table.waitFor();
  const text = await table.innerText();
  for (const what of [
    'Set plan',
    'Flag',
    'Lift flag',
    'phishing report 42',
    'free → business',
    'Started a backup',
  ])
    assert.ok(text.includes(what), `the action log shows ${what}`);
  assert.ok(text.includes('(console)'), 'the console is named as where the action came from');
  await shoot(page, 'operator-actions');
  await page.context().close();
});

test('a user who is not an operator sees no Operator link and is refused on the page', async () => {
  const page = await signedIn(customer.user_id);
  await page.goto(`${CONSOLE}/`);
  await page
    .locator('#who')
    .getByText(/customer-/)
    .waitFor();
  const link = page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Operator' });
  assert.is(await link.count(), 0, 'the link is hidden');
  await page.goto(`${CONSOLE}/operator`);
  await page.getByText("Only this server's operators").waitFor();
  await page.goto(`${CONSOLE}/operator/health`);
  await page.getByText("Only this server's operators").waitFor();
  assert.is(await page.getByText('Job queue').count(), 0);
  await page.context().close();
});

test('no page had a script error', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  await worker.stop();
  await close();
  await rm(path.resolve('.data', 'test-scratch', `console-backups-${process.pid}`), {
    recursive: true,
    force: true,
  });
});
test.run();
