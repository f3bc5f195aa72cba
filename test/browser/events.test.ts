/**
 * The event log in Chromium: search, the type list, grouped errors with a count, and an error's
 * details as a panel with its stack as lines and the release that threw. Screenshots at 1280 and
 * 390 px.
 */
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { recordEvents } from '../../src/events/record.ts';
import { site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h);
const app = await h.api('PUT /v0/apps', { key: owner.api_key, body: site() as never });
const base = { app_id: app.app_id, account_id: owner.account_id, release_id: app.release_id };
await recordEvents(h.deps.db, [
  ...Array.from({ length: 4 }, () => ({
    ...base,
    type: 'runtime.request_error',
    severity: 'error' as const,
    message: 'TypeError: total is undefined',
    metadata: {
      path: '/checkout',
      stack:
        'TypeError: total is undefined\n    at sum (src/cart.ts:12:7)\n    at handler (src/index.ts:40:3)',
    },
  })),
  {
    ...base,
    type: 'runtime.log',
    severity: 'info',
    message: 'order ord_77 paid',
    metadata: { order: 'ord_77' },
  },
]);

test('search, types, grouped errors and a readable error', async () => {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${CONSOLE}/apps/${app.app_id}/events`);
  await page.getByRole('cell', { name: 'order ord_77 paid' }).waitFor();

  await page.getByLabel('Search').fill('ord_77');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#content tbody tr').length === 1);

  await page.getByLabel('Search').fill('');
  await page.getByLabel('Type').selectOption('runtime.request_error');
  assert.match(await page.locator('#type option:checked').innerText(), 'runtime.request_error (4)');
  await page.getByLabel('Group identical').check();
  await page.getByRole('cell', { name: '4×' }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#content tbody tr').length === 1);
  await page.getByRole('link', { name: 'TypeError: total is undefined' }).click();
  const panel = page.locator('#detail');
  await panel.locator('pre.stack').getByText('at sum (src/cart.ts:12:7)').waitFor();
  assert.match(await panel.innerText(), app.release_id);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(shots, `events-${width}.png`), fullPage: true });
  }
  assert.equal(errors, []);
  await context.close();
});

test.after(async () => {
  await close();
});
test.run();
