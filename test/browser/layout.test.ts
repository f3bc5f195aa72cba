/**
 * The console's frame: a styled page for an address it does not have (an unknown API path stays
 * JSON), a Docs link, `/` to find an app, relative times with the exact one on hover, releases
 * credited to the person, and at 390 px a header of two rows and no sideways scrolling.
 */
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'layout');
const apps: string[] = [];
for (const name of ['Billing portal', 'Blog', 'Checkout']) {
  const r = await h.api('PUT /v0/apps', {
    key: owner.api_key,
    body: site({ app: { name } }) as never,
  });
  apps.push(r.app_id);
}
const context = await consoleContext(browser, h.deps.db, owner.user_id, port);
const page = await context.newPage();
const errors: string[] = [];
page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));

test('an unknown console address is a page; an unknown API path stays JSON', async () => {
  const r = await page.goto(`${CONSOLE}/no/such/page`);
  assert.is(r!.status(), 404);
  await page.getByRole('heading', { name: 'There is no such page' }).waitFor();
  assert.match(r!.headers()['content-security-policy'] ?? '', "script-src 'self'");
  await page.screenshot({ path: path.join(shots, 'not-found-1280.png') });
  const api = await h.call('GET', '/v0/no-such-route', {
    host: `console.localhost:${port}`,
    key: owner.api_key,
  });
  assert.is(api.status, 404);
  assert.is(api.body.error.code, 'not_found');
});

test('an app origin with nothing published: a page for a browser, the error body for code', async () => {
  const origin = `http://nothingpublished0.apps.localhost:${port}/`;
  const visit = await page.goto(origin);
  assert.is(visit!.status(), 404);
  await page.getByRole('heading', { name: 'Nothing is published here' }).waitFor();
  const fromCode = await h.call('GET', '/', { host: 'nothingpublished0.apps.localhost' });
  assert.is(fromCode.body.error.code, 'not_found');
});

test('the header links the docs; / finds an app', async () => {
  await page.goto(`${CONSOLE}/`);
  await page.getByRole('link', { name: 'Billing portal' }).waitFor();
  assert.is(
    await page.getByRole('link', { name: 'Docs' }).getAttribute('href'),
    `http://docs.localhost:${port}`,
  );
  // keys go to the page once its script has run (the test below)
  await page.locator('main:not([inert])').waitFor();
  await page.keyboard.press('/');
  assert.is(await page.evaluate(() => document.activeElement?.id), 'find');
  await page.keyboard.type('portal');
  await page.getByText('No app matches').or(page.locator('#content tbody tr')).first().waitFor();
  assert.equal(await page.locator('#content tbody tr a').first().innerText(), 'Billing portal');
  assert.is(await page.locator('#content tbody tr').count(), 1);
  await page.locator('#find').fill('');
  await page.keyboard.type('blog');
  await page.waitForFunction(() => document.querySelectorAll('#content tbody tr').length === 1);
  assert.equal(await page.locator('#content tbody tr a').first().innerText(), 'Blog');
  await page.keyboard.type('zzz');
  await page.getByText('No app matches').waitFor();
});

test('releases: relative times with the exact one on hover, credited to the person', async () => {
  await page.goto(`${CONSOLE}/apps/${apps[0]}`);
  const time = page.locator('#content time').first();
  await time.waitFor();
  assert.match(await time.innerText(), /just now|second|minute/);
  assert.ok((await time.getAttribute('title'))!.length > 8, 'the exact time is on hover');
  await page
    .getByText(/by layout-/)
    .first()
    .waitFor();
});

test('at 390 px: a two-row header and no sideways scrolling', async () => {
  await page.setViewportSize({ width: 390, height: 800 });
  for (const p of ['/', `/apps/${apps[0]}`, '/keys', '/account']) {
    await page.goto(`${CONSOLE}${p}`);
    await page.locator('#content:not(.loading)').first().waitFor();
    const header = await page.locator('header').boundingBox();
    if (header!.height >= 110) await page.screenshot({ path: path.join(shots, 'header-390.png') });
    assert.ok(header!.height < 110, `${p}: header ${header!.height}px tall`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `${p}: ${overflow}px sideways`);
  }
  await page.goto(`${CONSOLE}/apps/${apps[0]}`);
  await page.locator('#content time').first().waitFor();
  await page.screenshot({ path: path.join(shots, 'releases-390.png'), fullPage: true });
});

test('until its script has run, a page takes no click or key: a form cannot submit itself natively', async () => {
  const documents: string[] = [];
  const onRequest = (r: import('playwright-core').Request) => {
    if (r.resourceType() === 'document') documents.push(r.url());
  };
  page.on('request', onRequest);
  // the device page's script waits for the session before it handles its form: hold that answer
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/v0/platform/session', async (route) => {
    await held;
    await route.continue();
  });
  try {
    await page.goto(`${CONSOLE}/device?user_code=BCDF-GHJK`);
    await page.locator('main[inert]').waitFor({ state: 'attached' });
    const box = (await page.getByRole('button', { name: 'Continue' }).boundingBox())!;
    // a person's click and Enter, which do not wait for the page as Playwright's click does
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate(() => document.activeElement?.tagName), 'BODY');
    release();
    await page.locator('main:not([inert])').waitFor();
    assert.is(await page.locator('#user_code').inputValue(), 'BCDF-GHJK');
    assert.equal(documents, [`${CONSOLE}/device?user_code=BCDF-GHJK`], 'no native submit');
    // and now the form is the page's: an unknown code is said so, in place
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#msg.error, #msg:not(:empty)').first().waitFor();
    assert.equal(documents, [`${CONSOLE}/device?user_code=BCDF-GHJK`]);
  } finally {
    release();
    await page.unroute('**/v0/platform/session');
    page.off('request', onRequest);
  }
});

test('no page had a script error', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  await context.close();
  await close();
});
test.run();
