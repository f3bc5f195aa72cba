/**
 * A release waiting for a secret, finished from the console: the releases page names the missing
 * secret; once it is set, the row says so and "Publish again" makes a new release live.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { consoleContext, consoleTour, shootWidths } from '../_lib/browser.ts';
import { newUser } from '../_lib/harness.ts';

const { port, h, browser, console: CONSOLE, shots, close } = await consoleTour();
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

/** The owner's console in a new context, its script errors collected. */
async function ownerPage() {
  const context = await consoleContext(browser, h.deps.db, owner.user_id, port);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}

test('set the missing secret, then "Publish again": the app is live', async () => {
  const { context, page, errors } = await ownerPage();
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

const waitingBundle = () =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: { secrets: { required: ['GREETING'] } },
    files: [
      file('public/index.html', 'static'),
      file(
        'server.js',
        "export default { fetch: (r, ctx) => new Response('old ' + ctx.GREETING) };",
        'text/javascript',
      ),
    ],
  }) as never;

test('an older waiting release asks before its older code goes live', async () => {
  const waiting = await h.api('PUT /v0/apps', { key: owner.api_key, body: waitingBundle() });
  const newer = await h.api('PUT /v0/apps/{app_id}', {
    key: owner.api_key,
    params: { app_id: waiting.app_id },
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', 'static'),
        file(
          'server.js',
          "export default { fetch: () => new Response('new') };",
          'text/javascript',
        ),
      ],
    }) as never,
  });
  assert.is(newer.activation.status, 'live');
  await h.api('PUT /v0/apps/{app_id}/secrets/{name}', {
    key: owner.api_key,
    params: { app_id: waiting.app_id, name: 'GREETING' },
    body: { value: 'world' },
  });
  const { context, page, errors } = await ownerPage();
  await page.goto(`${CONSOLE}/apps/${waiting.app_id}`);
  await page.getByText('it is older than the live release').waitFor();
  assert.is(await page.getByRole('button', { name: 'Publish again', exact: true }).count(), 0);
  const host = `${waiting.app_id}.apps.localhost`;
  let asked = '';
  page.once('dialog', (d) => ((asked = d.message()), void d.dismiss()));
  await page.getByRole('button', { name: 'Publish older code again' }).click();
  await waitUntil(() => asked !== '');
  assert.match(asked, /published before the live release/);
  assert.is((await h.call('GET', '/run', { host })).text, 'new', 'dismissed: nothing changed');
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Publish older code again' }).click();
  await page.getByText(/is live \(published again from rel_/).waitFor();
  assert.is(
    (await h.call('GET', '/run', { host })).text,
    'old world',
    'confirmed: the older code is live',
  );
  assert.equal(errors, []);
  await context.close();
});

test('setting the last missing secret on the Secrets page offers the waiting release', async () => {
  const waiting = await h.api('PUT /v0/apps', { key: owner.api_key, body: waitingBundle() });
  const { context, page, errors } = await ownerPage();
  await page.goto(`${CONSOLE}/apps/${waiting.app_id}/secrets?set=GREETING`);
  await page.locator('#value').fill('there');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('was waiting for its secrets; they are all set now.').waitFor();
  await shootWidths(page, shots, 'secrets-waiting-release');
  await page.getByRole('button', { name: 'Publish it now' }).click();
  await page.getByText(/is live \(published again from rel_/).waitFor();
  assert.is(
    (await h.call('GET', '/run', { host: `${waiting.app_id}.apps.localhost` })).text,
    'old there',
  );
  assert.equal(errors, []);
  await context.close();
});

async function waitUntil(ok: () => boolean) {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
}

test.after(async () => {
  await close();
});
test.run();
