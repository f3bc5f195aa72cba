/**
 * The console offers a member only what their role may do, in Chromium: a viewer reads an app's
 * releases, secrets, domains and resources and sees no button that the API would refuse (make
 * live, roll back, end preview links, set or delete a secret, add or remove a domain, run a job,
 * invite a member), with a line saying who may; a developer is offered them. A release whose
 * unique index the rows do not fit points at the rows to fix. An owner unpublishes an app and erases
 * its data from its page. Screenshots of the
 * viewer's Releases page and the owner's erase form at 1280 and 390 px go to SCREENSHOTS=<dir>
 * (default .data/screenshots).
 */
import type { Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour, shootWidths } from '../_lib/browser.ts';
import { newMember, newUser } from '../_lib/harness.ts';
import { setPlan } from '../../src/plans/operator.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'owner');
const viewer = await newMember(h, owner.account_id, 'viewer');
const developer = await newMember(h, owner.account_id, 'developer');

const version = (v: string) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', `<h1>version ${v}</h1>`),
      file('server.js', `export default { fetch: () => new Response('${v}') };`, 'text/javascript'),
    ],
    resources: { jobs: { sync: {} } },
  }) as never;
const key = owner.api_key;
const first = await h.api('PUT /v0/apps', { key, body: version('one') });
const appId = first.app_id;
await h.api('PUT /v0/apps/{app_id}', { key, params: { app_id: appId }, body: version('two') });
await h.api('PUT /v0/apps/{app_id}', {
  key,
  params: { app_id: appId },
  query: { preview: 'true' },
  body: version('three'),
});
await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
  key,
  params: { app_id: appId, name: 'API_TOKEN' },
  body: { value: 'not shown' },
});
await setPlan(h.deps, { accountId: owner.account_id, planKey: 'starter' }); // slugs
const slug = await h.call('POST', `/v0/apps/${appId}/slugs`, {
  key,
  body: { slug: `shop-${appId}` },
});
assert.is(slug.status, 201, slug.text);

const errors: string[] = [];
async function signedIn(userId: string): Promise<Page> {
  const page = await (await consoleContext(browser, h.deps.db, userId, port)).newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return page;
}
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

test('a viewer is offered no change the API would refuse, and told who may', async () => {
  const page = await signedIn(viewer.user_id);
  await page.goto(`${CONSOLE}/apps/${appId}`);
  await button(page, 'Open preview').waitFor();
  await page.getByText('Owners, admins and developers publish, roll back').waitFor();
  for (const name of ['Make live', 'Roll back', 'End preview links'])
    assert.is(await button(page, name).count(), 0, name);
  // the header names the app's account, not the viewer's own (the default one)
  const switcher = page.locator('#account-switch');
  assert.is(await switcher.inputValue(), owner.account_id);
  assert.match(await switcher.locator('option:checked').innerText(), '· viewer');
  // at 1280 px the header keeps one row with a long address and account name (cut, whole on hover)
  const middle = async (selector: string) => {
    const box = (await page.locator(selector).boundingBox())!;
    return Math.round(box.y + box.height / 2);
  };
  assert.is(await middle('#sign-out'), await middle('.brand'), 'Sign out on the first row');
  const who = page.locator('#who');
  assert.is(await who.getAttribute('title'), await who.textContent());
  await shootWidths(page, shots, 'roles-viewer-releases');

  await page.goto(`${CONSOLE}/apps/${appId}/secrets`);
  await page.getByText('API_TOKEN').waitFor();
  await page.getByText('Owners, admins and developers set and delete secrets.').waitFor();
  assert.is(await button(page, 'Delete').count(), 0);
  assert.is(await page.getByRole('heading', { name: 'Set a secret' }).isVisible(), false);

  await page.goto(`${CONSOLE}/apps/${appId}/domains`);
  await page.locator(`[data-hostname^="shop-${appId}."]`).waitFor();
  await page.getByText('Owners, admins and developers add, verify and remove').waitFor();
  for (const name of ['Disable', 'Remove', 'Add slug', 'Add domain'])
    assert.is(await button(page, name).isVisible(), false, name);

  await page.goto(`${CONSOLE}/apps/${appId}/resources`);
  await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  assert.is(await button(page, 'Run now').count(), 0);

  // the account pages follow the app's account from its pages: the owner's members
  await page.goto(`${CONSOLE}/members`);
  await page.locator('#content table').getByText('viewer', { exact: true }).first().waitFor();
  assert.is(await page.locator('#invite-card').isVisible(), false);
  await page.context().close();
});

test('a developer is offered them', async () => {
  const page = await signedIn(developer.user_id);
  await page.goto(`${CONSOLE}/apps/${appId}`);
  for (const name of ['Make live', 'Roll back', 'End preview links'])
    await button(page, name).waitFor();
  assert.is(await page.getByText('Your role reads this page').count(), 0);

  await page.goto(`${CONSOLE}/apps/${appId}/secrets`);
  await button(page, 'Delete').waitFor();
  assert.ok(await page.getByRole('heading', { name: 'Set a secret' }).isVisible());

  await page.goto(`${CONSOLE}/apps/${appId}/domains`);
  await button(page, 'Remove').waitFor();
  assert.ok(await button(page, 'Add slug').isVisible());

  await page.goto(`${CONSOLE}/apps/${appId}/resources`);
  await button(page, 'Run now').waitFor();
  await page.context().close();
});

test('a release whose unique index the stored rows do not fit says which rows to fix', async () => {
  const people = (indexes: unknown[]) =>
    site({
      resources: { data: { collections: { people: { fields: { email: 'string' }, indexes } } } },
    }) as never;
  const other = await h.api('PUT /v0/apps', { key, body: people([]) });
  for (let i = 0; i < 2; i++)
    await h.api('POST /v0/apps/{app_id}/data/{collection}', {
      key,
      params: { app_id: other.app_id, collection: 'people' },
      body: { email: 'same@example.com' },
    });
  const refused = await h.api('PUT /v0/apps/{app_id}', {
    key,
    params: { app_id: other.app_id },
    body: people([{ name: 'by_email', fields: ['email'], unique: true }]),
  });
  assert.is(refused.activation.status, 'requires_migration');
  const page = await signedIn(developer.user_id);
  await page.goto(`${CONSOLE}/apps/${other.app_id}`);
  await page.getByText('Its unique indexes do not fit the stored rows').waitFor();
  const fix = page.getByRole('link', { name: 'Change or delete one of each pair' });
  assert.is(await fix.getAttribute('href'), `/apps/${other.app_id}/data`);
  await page.context().close();
});

test('an owner unpublishes and then erases an app from its page; a developer is offered neither', async () => {
  const doomed = await h.api('PUT /v0/apps', {
    key,
    body: site({
      resources: { data: { collections: { notes: { fields: { text: 'string' } } } } },
    }) as never,
  });
  await h.api('POST /v0/apps/{app_id}/data/{collection}', {
    key,
    params: { app_id: doomed.app_id, collection: 'notes' },
    body: { text: 'remember me' },
  });
  const dev = await signedIn(developer.user_id);
  await dev.goto(`${CONSOLE}/apps/${doomed.app_id}`);
  await dev.locator('#content table').waitFor();
  assert.is(await dev.locator('#danger').isVisible(), false);
  await dev.context().close();

  const page = await signedIn(owner.user_id);
  page.on('dialog', (d) => d.accept());
  await page.goto(`${CONSOLE}/apps/${doomed.app_id}`);
  await button(page, 'Unpublish').click();
  await page.getByText('Unpublished. Publish again to bring it back.').waitFor();
  await page.locator('#app-origin').getByText('unpublished').waitFor();
  await page.getByLabel('Type the app id').fill('wrong');
  await button(page, 'Erase data').click();
  await page.getByText("confirm must be the app's id").waitFor();
  await page.getByLabel('Type the app id').fill(doomed.app_id);
  await shootWidths(page, shots, 'roles-owner-erase');
  await button(page, 'Erase data').click();
  await page
    .getByText('Erased 1 rows, 0 files, 0 KV keys, 0 R2 objects, 0 app users and 0 secrets.')
    .waitFor();
  const usage = await h.api('GET /v0/apps/{app_id}/resources', {
    key,
    params: { app_id: doomed.app_id },
  });
  assert.is(usage.usage['storage.bytes'], 0);
  await page.context().close();
});

test('no page had a script error', () => {
  assert.equal(errors, []);
});

test.after(() => close());
test.run();
