/**
 * The storage page in Chromium: a Workers app's KV namespace (keys by prefix, a value viewed,
 * edited and deleted), R2 bucket (folders, an object deleted) and queue (depth, purged), the view
 * kept in the URL. Screenshots at 1280 and 390 px.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
const owner = await newUser(h, 'owner');
const SERVER = `export default { async fetch(request, env) {
  if (new URL(request.url).pathname === '/seed') {
    await env.CACHE.put('greeting', 'hello', { metadata: { lang: 'en' } });
    await env.CACHE.put('user/1', JSON.stringify({ name: 'Ada' }));
    await env.CACHE.put('user/2', JSON.stringify({ name: 'Grace' }), { expirationTtl: 86400 });
    await env.MEDIA.put('photos/cat.txt', 'meow', { httpMetadata: { contentType: 'text/plain' } });
    await env.MEDIA.put('photos/2024/dog.txt', 'woof');
    await env.MEDIA.put('readme.md', '# media');
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await env.MEDIA.put('photos/dot.png', Uint8Array.from(atob(png), (c) => c.charCodeAt(0)), { httpMetadata: { contentType: 'image/png' } });
    for (let i = 0; i < 3; i++) await env.Q.send({ i });
    return new Response('seeded');
  }
  return new Response(await env.CACHE.get('greeting'));
} };`;
const published = await h.call('PUT', '/v0/apps', {
  key: owner.api_key,
  body: site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file('server.js', SERVER, 'text/javascript'),
      file(
        '.platform/bindings.json',
        JSON.stringify({
          kv_namespaces: [{ binding: 'CACHE' }],
          r2_buckets: [{ binding: 'MEDIA', bucket_name: 'media' }],
          queues: { producers: [{ binding: 'Q', queue: 'emails' }] },
        }),
        'application/json',
      ),
    ],
  }),
});
assert.is(published.body.status, 'published', published.text);
const appId = published.body.app_id as string;
const host = `${appId}.apps.localhost`;
assert.is((await h.call('GET', '/seed', { host })).text, 'seeded');

const errors: string[] = [];
async function signedIn(): Promise<Page> {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port, {
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico'))
      errors.push(`${r.url()} answered ${r.status()}`);
  });
  return page;
}

test('KV keys by prefix; a value viewed, edited (the app reads it) and deleted', async () => {
  const page = await signedIn();
  await page.goto(`${CONSOLE}/apps/${appId}`);
  await page
    .getByRole('navigation', { name: 'App' })
    .getByRole('link', { name: 'Storage' })
    .click();
  await page.locator('#browse tbody tr', { hasText: 'greeting' }).waitFor();
  assert.is(
    await page
      .locator('#bindings tbody tr', { hasText: 'emails' })
      .locator('td')
      .nth(1)
      .textContent(),
    '3',
  );
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(shots, `storage-kv-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('searchbox', { name: 'Keys starting with…' }).fill('user/');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#browse tbody tr').length === 2);
  assert.match(page.url(), /\?kv=CACHE&prefix=user%2F$/);
  await page.getByRole('searchbox', { name: 'Keys starting with…' }).fill('');
  // by what a value holds
  await page.getByRole('searchbox', { name: 'Name, value or metadata contains…' }).fill('Grace');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#browse tbody tr').length === 1);
  assert.match((await page.locator('#browse tbody tr').textContent()) ?? '', 'user/2');
  assert.match(page.url(), /\?kv=CACHE&search=Grace$/);
  await page.getByRole('searchbox', { name: 'Name, value or metadata contains…' }).fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  const row = page.locator('#browse tbody tr', { hasText: 'greeting' });
  await row.waitFor();
  await row.getByRole('button', { name: 'View' }).click();
  const value = page.getByRole('textbox', { name: 'Value of greeting' });
  assert.is(await value.inputValue(), 'hello');
  await value.fill('edited in the console');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('greeting is saved.').waitFor();
  assert.is((await h.call('GET', '/read', { host })).text, 'edited in the console');
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('greeting is deleted.').waitFor();
  assert.is(await page.locator('#browse tbody tr', { hasText: 'greeting' }).count(), 0);
  await page.context().close();
});

test('R2 folders; text and an image previewed; an object deleted', async () => {
  const page = await signedIn();
  await page.goto(`${CONSOLE}/apps/${appId}/storage?r2=media`);
  await page.getByRole('link', { name: 'photos/', exact: true }).click();
  await page.locator('#browse tbody tr', { hasText: 'cat.txt' }).waitFor();
  assert.match(page.url(), /\?r2=media&prefix=photos%2F$/);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(shots, `storage-r2-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page
    .locator('#browse tbody tr', { hasText: 'cat.txt' })
    .getByRole('button', { name: 'Preview' })
    .click();
  assert.is(await page.locator('#value pre.preview').textContent(), 'meow');
  await page
    .locator('#browse tbody tr', { hasText: 'dot.png' })
    .getByRole('button', { name: 'Preview' })
    .click();
  await page.waitForFunction(() => {
    const img = document.querySelector('#value img.preview');
    return img instanceof HTMLImageElement && img.complete && img.naturalWidth === 1;
  });
  await page.screenshot({ path: path.join(shots, 'storage-r2-preview-1280.png'), fullPage: true });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page
      .locator('#browse tbody tr', { hasText: 'cat.txt' })
      .getByRole('button', { name: 'Download' })
      .click(),
  ]);
  assert.is(await readFile((await download.path())!, 'utf8'), 'meow');
  assert.is(download.suggestedFilename(), 'cat.txt');
  page.once('dialog', (d) => void d.accept());
  await page
    .locator('#browse tbody tr', { hasText: 'cat.txt' })
    .getByRole('button', { name: 'Delete' })
    .click();
  await page.getByText('photos/cat.txt is deleted.').waitFor();
  await page.context().close();
});

test("a queue's messages: previewed, one retried now, the rest purged", async () => {
  const page = await signedIn();
  await page.goto(`${CONSOLE}/apps/${appId}/storage`);
  await page.getByRole('link', { name: 'emails', exact: true }).click();
  await page.waitForFunction(() => document.querySelectorAll('#browse tbody tr').length === 3);
  assert.match(page.url(), /\?queue=emails$/);
  assert.equal(await page.locator('#browse tbody code.preview').allTextContents(), [
    '{"i":0}',
    '{"i":1}',
    '{"i":2}',
  ]);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(shots, `storage-queue-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page
    .locator('#browse tbody tr', { hasText: '{"i":1}' })
    .getByRole('button', { name: 'Retry now' })
    .click();
  await page.getByText('1 messages retried.').waitFor();
  page.once('dialog', (d) => void d.accept());
  await page.locator('#browse').getByRole('button', { name: 'Purge' }).click();
  await page.getByText('3 messages of emails are deleted.').waitFor();
  await page.getByText('No messages are waiting in emails.').waitFor();
  assert.is(
    await page
      .locator('#bindings tbody tr', { hasText: 'emails' })
      .locator('td')
      .nth(1)
      .textContent(),
    '0',
  );
  await page.context().close();
});

test('no page had a script error or a failed request', () => {
  assert.equal(errors, []);
});

test.after(async () => {
  await close();
});
test.run();
