/**
 * A preview from the console, in Chromium: the releases page lists it with its origin, "Open
 * preview" opens it in a new tab (the link's grant becomes a cookie on the preview origin only), a
 * tab without the grant is refused, and "Make live" moves the live pointer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleContext, shootWidths, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots: SHOTS, close } = await consoleTour();
const owner = await newUser(h);

const version = (v: string) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', `<!doctype html><title>v</title><h1>version ${v}</h1>`),
      file(
        'server.js',
        `export default { fetch: () => new Response('server ${v}') };`,
        'text/javascript',
      ),
    ],
  }) as never;

const first = await h.api('PUT /v0/apps', { key: owner.api_key, body: version('one') });
const preview = await h.api('PUT /v0/apps/{app_id}', {
  key: owner.api_key,
  params: { app_id: first.app_id },
  query: { preview: 'true' },
  body: version('two'),
});
assert.is(preview.activation.status, 'inactive');

test('open a preview from the console, then make it live', async () => {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port);
  const page = await context.newPage();
  const errors: string[] = [];
  context.on('page', (p) => p.on('pageerror', (e) => errors.push(e.message)));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${CONSOLE}/apps/${first.app_id}`);
  await page.getByRole('button', { name: 'Open preview' }).waitFor();
  assert.ok(await page.getByText(new URL(preview.preview!.origin).host).isVisible());
  await shootWidths(page, SHOTS, 'releases-preview');

  // a tab with no grant is refused
  const stranger = await browser.newPage();
  await stranger.goto(`${preview.preview!.origin}/`);
  assert.ok(await stranger.getByRole('heading', { name: 'This preview is private' }).isVisible());
  await shootWidths(stranger, SHOTS, 'preview-private');
  await stranger.close();

  const [tab] = await Promise.all([
    context.waitForEvent('page'),
    page.getByRole('button', { name: 'Open preview' }).click(),
  ]);
  await tab.getByRole('heading', { name: 'version two' }).waitFor();
  assert.is(new URL(tab.url()).host, new URL(preview.preview!.origin).host);
  assert.is(new URL(tab.url()).search, '', 'the grant is gone from the address bar');
  assert.is(await tab.evaluate(() => document.cookie), '', 'the grant cookie is HttpOnly');
  const answer = await tab.evaluate(async () => (await fetch('/run')).text());
  assert.is(answer, 'server two');

  // a link that reached the wrong people: ending every link closes the open tab too
  await page.getByRole('button', { name: 'End preview links' }).click();
  await page.getByText('Every preview link made until now is closed.').waitFor();
  await shootWidths(page, SHOTS, 'releases-links-ended');
  await tab.reload();
  await tab.getByRole('heading', { name: 'This preview is private' }).waitFor();
  assert.ok(await tab.getByText(/revoked/).isVisible());
  await tab.close();
  // Open preview makes a new link, which opens it again
  const [reopened] = await Promise.all([
    context.waitForEvent('page'),
    page.getByRole('button', { name: 'Open preview' }).click(),
  ]);
  await reopened.getByRole('heading', { name: 'version two' }).waitFor();
  await reopened.close();

  await page.getByRole('button', { name: 'Make live' }).click();
  await page.getByText(`${preview.release_id} is live.`).waitFor();
  const canonical = await h.call('GET', '/run', { host: `${first.app_id}.apps.localhost` });
  assert.is(canonical.text, 'server two');
  // the list is drawn again: the release is live, no longer a preview
  await page.getByRole('button', { name: 'Open preview' }).waitFor({ state: 'detached' });
  assert.is(await page.locator('.live-dot').count(), 1);
  assert.equal(errors, []);
  await context.close();
});

test.after(async () => {
  await close();
});
test.run();
