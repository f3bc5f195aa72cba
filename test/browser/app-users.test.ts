/**
 * The app's users in Chromium: the team sees who signed up, changes roles, disables someone (the
 * app, open in that user's own browser, no longer knows them at its next request), re-enables,
 * withdraws an invitation; an app that declares no app users says how to. Screenshots at 1280 and
 * 390 px go to SCREENSHOTS=<dir> (default .data/screenshots).
 */
import type { BrowserContext, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { consoleContext, shootWidths, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'owner');
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) {
    const user = await ctx.auth.currentUser(request);
    return new Response('<p id="who">' + (user ? 'signed in as ' + user.email + ' [' + user.roles.join(',') + ']' : 'anonymous') + '</p>', { headers: { 'content-type': 'text/html' } });
  } };`,
  { resources: { auth: { mode: 'app_users', public_signup: true, roles: ['editor'] } } },
);
const plain = await publishServerApp(
  h,
  owner.api_key,
  'export default { fetch: () => new Response("x") };',
);
const APP = `http://${app.host}:${port}`;

const errors: string[] = [];
const contexts: BrowserContext[] = [];
async function consoleAs(userId: string): Promise<Page> {
  const context = await consoleContext(browser, h.deps.db, userId, port);
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return page;
}
const shoot = (page: Page, name: string) => shootWidths(page, shots, name);

test('disable an app user from the console: their open app forgets them; enable brings them back', async () => {
  // the app user signs up on the app's own origin, in their own browser
  const visitor = await browser.newContext();
  contexts.push(visitor);
  const tab = await visitor.newPage();
  tab.on('pageerror', (e) => errors.push(`${tab.url()}: ${e.message}`));
  await tab.goto(`${APP}/me`);
  await tab.getByText('anonymous').waitFor();
  const signed = await tab.evaluate(async () => {
    const r = await fetch('/_platform/auth/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dana@example.com', password: 'correct horse battery' }),
    });
    return r.status;
  });
  assert.is(signed, 201);
  await tab.reload();
  await tab.getByText('signed in as dana@example.com []').waitFor();

  const page = await consoleAs(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}/invites`);
  await page.waitForURL(`${CONSOLE}/apps/${app.appId}/users`);
  await page.getByRole('cell', { name: /dana@example.com/ }).waitFor();

  page.once('dialog', (d) => void d.accept('editor'));
  await page.getByRole('button', { name: 'Roles' }).click();
  await page.getByText('Roles of dana@example.com changed.').waitFor();
  await tab.reload();
  await tab.getByText('signed in as dana@example.com [editor]').waitFor();

  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByText('dana@example.com is disabled and signed out.').waitFor();
  await page.locator('.badge.bad', { hasText: 'disabled' }).waitFor();
  await tab.reload();
  await tab.getByText('anonymous').waitFor();
  await shoot(page, 'app-users');

  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByText('dana@example.com can sign in again.').waitFor();
  const back = await tab.evaluate(async () => {
    const r = await fetch('/_platform/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dana@example.com', password: 'correct horse battery' }),
    });
    return r.status;
  });
  assert.is(back, 200);
  await tab.reload();
  await tab.getByText('signed in as dana@example.com [editor]').waitFor();
});

test('invite, see it pending, withdraw it', async () => {
  const page = await consoleAs(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}/users`);
  await page.getByLabel('E-mail').fill('erin@example.com');
  await page.getByLabel(/^Roles/).fill('editor');
  await page.getByRole('button', { name: 'Create invite' }).click();
  await page.locator('#invites').getByRole('cell', { name: 'erin@example.com' }).waitFor();
  await page.getByRole('button', { name: 'Withdraw' }).click();
  await page.getByText('The invitation to erin@example.com is withdrawn').waitFor();
  await page.locator('#invites').getByText('None.').waitFor();
});

test('an app without app users says why, and offers no invite', async () => {
  const page = await consoleAs(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${plain.appId}/users`);
  await page.getByRole('heading', { name: 'This app has no app users' }).waitFor();
  assert.ok(await page.locator('#invite-card').isHidden());
  await shoot(page, 'app-users-none');
});

test('no page had a script error', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await close();
});
test.run();
