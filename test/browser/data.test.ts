/**
 * The data browser in Chromium: an owner creates, edits and deletes a row, follows a reference to
 * the row it names, and filters; what app code reads follows each change; a viewer reads only.
 * Screenshots at 1280 and 390 px go to SCREENSHOTS=<dir> (default .data/screenshots).
 */
import type { Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { consoleContext, shootWidths, consoleTour } from '../_lib/browser.ts';
import { newMember, newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'owner');
const viewer = await newMember(h, owner.account_id, 'viewer');
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) {
    return Response.json(await ctx.data.collection('tasks').list({ limit: 1000 }));
  } };`,
  {
    resources: {
      data: {
        collections: {
          people: { fields: { name: 'string' } },
          tasks: {
            fields: {
              title: 'string',
              status: { type: 'enum', values: ['open', 'done'] },
              owner: { type: 'reference', collection: 'people' },
              meta: 'json',
            },
            indexes: [{ name: 'by_status', fields: ['status'] }],
          },
        },
      },
    },
  },
);
const ada = await h.api('POST /v0/apps/{app_id}/data/{collection}', {
  key: owner.api_key,
  params: { app_id: app.appId, collection: 'people' },
  body: { name: 'Ada' },
});
const appRows = async () =>
  (await h.call('GET', '/rows', { host: app.host })).body as Record<string, unknown>[];

const errors: string[] = [];
async function signedIn(userId: string): Promise<Page> {
  const page = await (await consoleContext(browser, h.deps.db, userId, port)).newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return page;
}
const shoot = (page: Page, name: string) => shootWidths(page, shots, name);

test('create, edit, follow a reference, filter and delete a row', async () => {
  const page = await signedIn(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}`);
  await page.getByRole('navigation', { name: 'App' }).getByRole('link', { name: 'Data' }).click();
  await page.getByRole('link', { name: 'people (1)' }).waitFor();
  await page.getByRole('link', { name: 'tasks (0)' }).click();
  await page.getByText('No rows yet.').waitFor();

  await page.getByRole('button', { name: 'New row' }).click();
  await page.getByLabel(/^title/).fill('Write the report');
  await page.getByLabel(/^status/).selectOption('open');
  await page.getByLabel(/^owner/).fill(ada.id);
  await page.getByLabel(/^meta/).fill('{"priority": 2}');
  await page.getByRole('button', { name: 'Create row' }).click();
  await page.getByText('Row created.').waitFor();
  let rows = await appRows();
  assert.is(rows.length, 1);
  assert.equal(
    [rows[0]!.title, rows[0]!.status, rows[0]!.owner, rows[0]!.meta],
    ['Write the report', 'open', ada.id, { priority: 2 }],
  );
  await page.locator('#row-panel pre').getByText('"priority": 2').waitFor();
  await shoot(page, 'data-row');

  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel(/^status/).selectOption('done');
  await page.getByLabel(/^meta/).fill('not json');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('meta is not valid JSON.').waitFor();
  await page.getByLabel(/^meta/).fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved.').waitFor();
  rows = await appRows();
  assert.is(rows[0]!.status, 'done');
  assert.not.ok('meta' in rows[0]!, 'an emptied field is cleared');

  // a value ctx.data refuses is refused here with its message
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel(/^owner/).fill('row_nobody0000000000000');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#msg.error').waitFor();
  const refused = await page.locator('#msg').innerText();
  assert.match(refused, /must be the id of a row in "people"/, refused);
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('link', { name: ada.id }).first().click();
  await page.locator('#row-panel').getByText('Ada').waitFor();
  assert.match(page.url(), /collection=people/);
  await page.goBack();
  await page.locator('#rows table').waitFor();

  await page.getByLabel(/^Filter/).fill('{"status": "open"}');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No row matches this filter.').waitFor();
  await page.getByLabel(/^Filter/).fill('{"status": "done"}');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.locator('#rows tbody tr').first().waitFor();
  await shoot(page, 'data-rows');

  await page.locator('#rows tbody a').first().click();
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('Row deleted.').waitFor();
  assert.equal(await appRows(), [], 'app code no longer sees the row');
  await page.context().close();
});

test('a viewer reads rows and is offered no change', async () => {
  await h.api('POST /v0/apps/{app_id}/data/{collection}', {
    key: owner.api_key,
    params: { app_id: app.appId, collection: 'tasks' },
    body: { title: 'Visible', status: 'open' },
  });
  const page = await signedIn(viewer.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}/data?collection=tasks`);
  await page.locator('#rows').getByText('Visible').waitFor();
  assert.is(await page.getByRole('button', { name: 'New row' }).count(), 0);
  await page.locator('#rows tbody a').first().click();
  await page.locator('#row-panel').getByText('Visible').waitFor();
  assert.is(await page.getByRole('button', { name: 'Edit' }).count(), 0);
  await page.getByText('Owners, admins and developers change rows.').waitFor();
  await page.context().close();
});

test('sort by an indexed field, both ways', async () => {
  for (const [title, status] of [
    ['Later', 'open'],
    ['Finished', 'done'],
    ['Untriaged', undefined],
  ] as const)
    await h.api('POST /v0/apps/{app_id}/data/{collection}', {
      key: owner.api_key,
      params: { app_id: app.appId, collection: 'tasks' },
      body: { title, ...(status ? { status } : {}) },
    });
  const page = await signedIn(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}/data?collection=tasks`);
  await page.locator('#rows tbody tr').first().waitFor();
  const titles = async () => {
    await page.locator('#rows tbody tr').first().waitFor();
    return page.locator('#rows td[data-label="title"]').allInnerTexts();
  };
  await page.getByLabel('Order').selectOption({ label: 'status, ascending' });
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(
    () => document.querySelector('#rows td[data-label="title"]')?.textContent === 'Finished',
  );
  assert.equal((await titles()).at(-1), 'Untriaged', 'a row without a status comes last');
  await page.getByLabel('Order').selectOption({ label: 'status, descending' });
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(
    () => document.querySelector('#rows td[data-label="title"]')?.textContent !== 'Finished',
  );
  const down = await titles();
  assert.equal(
    down.filter((t) => t !== 'Visible'),
    ['Later', 'Finished', 'Untriaged'],
  );
  await page.context().close();
});

test('a long collection pages: the first 25 rows, then Show more brings the rest', async () => {
  for (let i = 0; i < 29; i++)
    await h.api('POST /v0/apps/{app_id}/data/{collection}', {
      key: owner.api_key,
      params: { app_id: app.appId, collection: 'people' },
      body: { name: `Person ${i}` },
    });
  const page = await signedIn(owner.user_id);
  await page.goto(`${CONSOLE}/apps/${app.appId}/data?collection=people`);
  const rows = page.locator('#rows tbody tr');
  await rows.first().waitFor();
  assert.is(await rows.count(), 25, 'one page');
  await page.getByRole('button', { name: 'Show more' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#rows tbody tr').length === 30);
  assert.is(await page.getByRole('button', { name: 'Show more' }).count(), 0, 'the last page');
  await page.context().close();
});

test('no page had a script error', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  await close();
});
test.run();
