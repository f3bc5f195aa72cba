/**
 * A release waiting for a secret, finished from the console: the releases page names the missing
 * secret; once it is set, the row says so and "Publish again" makes a new release live.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, close } = await consoleTour();
const owner = await newUser(h);
const stored = await h.api('PUT /v0/apps', {
  key: owner.api_key,
  body: site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: { secrets: { required: ['GREETING'] } },
    files: [
      file('public/index.html', 'static'),
      file(
        'server.js',
        "export default { fetch: (r, ctx) => new Response('hello ' + ctx.GREETING) };",
        'text/javascript',
      ),
    ],
  }) as never,
});
assert.is(stored.activation.status, 'pending_secrets');

test('set the missing secret, then "Publish again": the app is live', async () => {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${CONSOLE}/apps/${stored.app_id}`);
  await page.getByRole('link', { name: 'set GREETING' }).waitFor();
  assert.is(
    await page.getByRole('button', { name: 'Publish again' }).count(),
    0,
    'not while it is missing',
  );
  await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
    key: owner.api_key,
    params: { app_id: stored.app_id, name: 'GREETING' },
    body: { value: 'world' },
  });
  await page.reload();
  await page.getByText('Its secrets are all set now').waitFor();
  await page.getByRole('button', { name: 'Publish again' }).click();
  await page.getByText(/is live \(published again from rel_/).waitFor();
  assert.is(
    (await h.call('GET', '/run', { host: `${stored.app_id}.apps.localhost` })).text,
    'hello world',
  );
  assert.equal(errors, []);
  await context.close();
});

test.after(async () => {
  await close();
});
test.run();
