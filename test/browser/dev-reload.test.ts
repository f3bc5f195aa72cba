/**
 * `platform dev`'s pages in Chromium (a platform with PLATFORM_DEV_MODE=1, as its local service runs):
 * an open tab reloads itself when a new release goes live, and a thrown error shows a page with the
 * error and its stack. A platform without dev mode answers the same browser with the generic error.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleTour, shootWidths } from '../_lib/browser.ts';
import { createHarness, freePort, listen, newUser } from '../_lib/harness.ts';

const { port, h, browser, shots: SHOTS, close } = await consoleTour({ PLATFORM_DEV_MODE: '1' });
const owner = await newUser(h);

const version = (v: string) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', `<!doctype html><title>dev</title><h1>version ${v}</h1>`),
      file(
        'server.js',
        `function explode(what) { throw new TypeError('cannot read ' + what); }
export default { fetch(req) {
  if (new URL(req.url).pathname === '/boom') explode('the ${v} config');
  return new Response('<!doctype html><title>server</title><h1>server ${v}</h1>', { headers: { 'content-type': 'text/html' } });
} };`,
        'text/javascript',
      ),
    ],
  }) as never;

const first = await h.api('PUT /v0/apps', { key: owner.api_key, body: version('one') });
const origin = `http://${first.app_id}.apps.localhost:${port}`;

test('an open tab reloads when a new release goes live', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // each page's event stream is open before the publish
  const listening = page.waitForResponse((r) => r.url().includes('/_platform/dev/changes'));
  await page.goto(`${origin}/`);
  await page.getByRole('heading', { name: 'version one' }).waitFor();
  await listening;
  const server = await browser.newPage();
  const serverListening = server.waitForResponse((r) => r.url().includes('/_platform/dev/changes'));
  await server.goto(`${origin}/page`);
  await server.getByRole('heading', { name: 'server one' }).waitFor();
  await serverListening;

  await h.api('PUT /v0/apps/{app_id}', {
    key: owner.api_key,
    params: { app_id: first.app_id },
    body: version('two'),
  });
  await page.getByRole('heading', { name: 'version two' }).waitFor();
  await server.getByRole('heading', { name: 'server two' }).waitFor();
  assert.equal(errors, []);
  await page.close();
  await server.close();
});

test('a thrown error shows its stack in the browser', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const res = await page.goto(`${origin}/boom`);
  assert.is(res?.status(), 500);
  await page.getByRole('heading', { name: 'TypeError: cannot read the two config' }).waitFor();
  const text = await page.locator('pre').innerText();
  assert.match(text, /explode/);
  assert.match(text, /server\.js:\d+/);
  await shootWidths(page, SHOTS, 'dev-error');
  // fixed: the error page reloads into the answer
  await h.api('PUT /v0/apps/{app_id}', {
    key: owner.api_key,
    params: { app_id: first.app_id },
    body: version('three'),
  });
  await page.getByRole('heading', { name: 'TypeError: cannot read the three config' }).waitFor();
  await page.close();
});

test('without dev mode: the generic error, no reload script', async () => {
  const prodPort = await freePort();
  const prod = await createHarness({ PORT: String(prodPort) });
  const prodLive = await listen(prod.server, prodPort);
  try {
    const u = await newUser(prod);
    const app = await prod.api('PUT /v0/apps', { key: u.api_key, body: version('p') });
    const page = await browser.newPage();
    const res = await page.goto(`http://${app.app_id}.apps.localhost:${prodPort}/boom`);
    assert.is(res?.status(), 500);
    const body = JSON.parse(await res!.text());
    assert.is(body.error.code, 'runtime_error');
    assert.not.match(JSON.stringify(body), /cannot read/);
    const index = await page.goto(`http://${app.app_id}.apps.localhost:${prodPort}/`);
    assert.not.match(await index!.text(), /_platform\/dev/);
    await page.close();
  } finally {
    await prodLive.close();
    await prod.close();
  }
});

test.after(async () => {
  await close();
});
test.run();
