/**
 * The file browser in Chromium: images in a public and a private store are previewed (the
 * console's CSP lets the app origins' images in, and a private one comes through a signed URL), a
 * private file downloads with its bytes, a file is deleted. Screenshots at 1280 and 390 px.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { consoleContext, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

// a 2x2 red PNG
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';
const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'owner');
const app = await publishServerApp(
  h,
  owner.api_key,
  `export default { async fetch(request, ctx) {
    const u = new URL(request.url);
    const bytes = u.searchParams.get('png') ? Uint8Array.from(atob('${PNG}'), (c) => c.charCodeAt(0)) : 'notes for later';
    const f = await ctx.files.store(u.searchParams.get('store')).createUpload(bytes, { filename: u.searchParams.get('name'), content_type: u.searchParams.get('png') ? 'image/png' : 'text/plain' });
    return Response.json(f);
  } };`,
  { resources: { files: { stores: { avatars: { public: true }, private: { public: false } } } } },
);
for (const q of [
  'store=avatars&name=red.png&png=1',
  'store=private&name=secret.png&png=1',
  'store=private&name=notes.txt',
])
  assert.is((await h.call('POST', `/up?${q}`, { host: app.host })).status, 200);

const errors: string[] = [];
async function signedIn(): Promise<Page> {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port, {
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  // a refused image (CSP) is a console error; a failed load is a response (the browser's own favicon aside)
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
      errors.push(`${page.url()}: console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico'))
      errors.push(`${r.url()} answered ${r.status()}`);
  });
  return page;
}
const loaded = (page: Page, alt: string) =>
  page.waitForFunction((a) => {
    const img = document.querySelector(`img[alt="${a}"]`) as HTMLImageElement | null;
    return !!img && img.complete && img.naturalWidth === 2;
  }, alt);

test('previews public and private images, downloads a private file, deletes one', async () => {
  const page = await signedIn();
  await page.goto(`${CONSOLE}/apps/${app.appId}`);
  await page.getByRole('navigation', { name: 'App' }).getByRole('link', { name: 'Files' }).click();
  await loaded(page, 'red.png');
  await page.getByRole('link', { name: 'private (2)' }).click();
  await loaded(page, 'secret.png');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(shots, `files-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  const row = page.locator('#files tbody tr', { hasText: 'notes.txt' });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    row.getByRole('button', { name: 'Download' }).click(),
  ]);
  assert.is(await readFile((await download.path())!, 'utf8'), 'notes for later');

  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('notes.txt is deleted.').waitFor();
  assert.is(await page.locator('#files tbody tr', { hasText: 'notes.txt' }).count(), 0);
  await page.context().close();
});

test('no page had a script error or a refused image', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  await close();
});
test.run();
