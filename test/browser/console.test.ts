/**
 * The console in a real browser (Debian's Chromium driven by playwright-core), from an empty
 * database: sign up from the e-mail link, approve the device code the real CLI is waiting on,
 * publish with the CLI, then look around every page: apps, releases and rollback, a release
 * waiting for a secret and setting it, resources, the live event tail, API keys, members, sign-out.
 * Screenshots of every page go to SCREENSHOTS=<dir> (default .data/screenshots, git-ignored).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../_lib/browser.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, freePort, listen, uniqueEmail } from '../_lib/harness.ts';
import { createUser } from '../../src/users/service.ts';
import { startSmtp, startWorker } from '../_lib/mail.ts';
import { startFakeStripe } from '../_lib/fake-stripe.ts';
import Stripe from 'stripe';
import { sql } from 'kysely';
import { setFlag, setPlan } from '../../src/plans/operator.ts';
import { operatorVerify } from '../../src/domains/verify.ts';
import { startDns } from '../_lib/dns-server.ts';

const port = await freePort();
const smtp = await startSmtp();
const dns = await startDns();
const STRIPE_KEY = 'sk_test_browserconsole';
const WHSEC = 'whsec_browserconsolesecret';
const fakeStripe = await startFakeStripe({ secretKey: STRIPE_KEY });
const h = await createHarness({
  PORT: String(port),
  SMTP_URL: smtp.url,
  STRIPE_SECRET_KEY: STRIPE_KEY,
  STRIPE_WEBHOOK_SECRET: WHSEC,
  STRIPE_API_BASE: fakeStripe.url,
  STRIPE_PRICE_STARTER: 'price_starter1',
  STRIPE_PRICE_BUSINESS: 'price_business1',
  PLATFORM_DNS_SERVERS: dns.server,
});
const worker = await startWorker(h);
const live = await listen(h.server, port);
const CONSOLE = `http://console.localhost:${port}`;
const work = path.resolve('.data', 'test-scratch', `browser-${process.pid}`);
const shots = process.env.SCREENSHOTS ?? path.resolve('.data', 'screenshots');
await mkdir(shots, { recursive: true });

const browser: Browser = await launchChromium();
const context = await browser.newContext();
const page = await context.newPage();
// a script error on any page fails the tour, even when the page still looks right
const pageErrors: string[] = [];
context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)));
page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
const shot = async (name: string, fullPage = true) =>
  void (await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage }));

function cli(
  args: string[],
  cwd = work,
): { child: ChildProcess; out: () => string; done: Promise<number> } {
  let out = '';
  const child = spawn(process.execPath, [path.resolve('src/cli/bin.mjs'), ...args], {
    cwd,
    env: {
      ...process.env,
      PLATFORM_API_URL: live.url,
      PLATFORM_API_KEY: '',
      XDG_CONFIG_HOME: path.join(work, 'config'),
      NO_COLOR: '1',
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
      BROWSER: '',
    },
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return { child, out: () => out, done };
}

test('sign up from the e-mail link in Chromium; the session cookie is __Host-, Secure, HttpOnly, SameSite=Lax', async () => {
  const email = uniqueEmail('browser');
  await page.goto(`${CONSOLE}/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.getByText('Check your e-mail.').waitFor();
  await shot('1-sign-in-sent');

  const mail = await smtp.next(email);
  const link = /http:\/\/console\.localhost:\d+\/auth\/confirm#token=[A-Za-z0-9_-]{43}/.exec(
    mail.text,
  )![0];
  await page.goto(link);
  await shot('2-confirm');
  assert.not.match(page.url(), 'token=', 'the token leaves the address bar');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${CONSOLE}/signup`);
  await page.getByLabel('Username').fill('browser-person');
  await page.getByLabel(/Account name/).fill('Browser Co');
  await shot('3-signup');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${CONSOLE}/`);
  await page.locator('#who', { hasText: email }).waitFor();
  await page.getByRole('heading', { name: 'No apps yet' }).waitFor();
  assert.match(await page.locator('pre').innerText(), 'platform publish my-site');
  assert.is(
    await page.getByLabel('Account').locator('option:checked').innerText(),
    'Browser Co · owner',
  );
  await shot('4-apps-empty');

  const cookie = (await context.cookies(CONSOLE)).find((c) => c.name === '__Host-platform_session');
  assert.ok(cookie, 'Chromium kept the session cookie on http://console.localhost');
  assert.equal(
    {
      secure: cookie!.secure,
      httpOnly: cookie!.httpOnly,
      sameSite: cookie!.sameSite,
      path: cookie!.path,
      domain: cookie!.domain,
    },
    { secure: true, httpOnly: true, sameSite: 'Lax', path: '/', domain: 'console.localhost' },
  );
  assert.is(await page.evaluate(() => document.cookie), '', 'page script cannot read it');
});

test('approve the device code the real CLI is waiting on; the CLI then runs whoami', async () => {
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const login = cli(['login', '--no-browser']);
  // the code and the link arrive in separate writes: wait for both
  let code = '';
  let url = '';
  for (let i = 0; i < 400 && !(code && url); i++) {
    code = /\b([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})\b/.exec(login.out())?.[1] ?? '';
    url = /(http:\/\/console\.localhost:\d+\/device\?user_code=\S+)/.exec(login.out())?.[1] ?? '';
    if (!(code && url)) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(code && url, `the CLI printed a code and a link: ${login.out()}`);

  await page.goto(url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page
    .getByRole('heading', { name: /Allow “platform CLI on .+” to use your account\?/ })
    .waitFor();
  // where and when the request started, and the warning (RFC 8628 section 5.4)
  assert.match(await page.locator('#request').innerText(), /started \d+ s ago from 127\.0\.0\.1/);
  await page.getByText('Only approve a code you started yourself.').waitFor();
  await shot('5-device');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('Approved. Return to your terminal').waitFor();
  await shot('6-approved');

  assert.is(await login.done, 0, login.out());
  assert.match(login.out(), '✔ logged in');
  const whoami = cli(['whoami']);
  assert.is(await whoami.done, 0, whoami.out());
  assert.match(whoami.out(), 'Browser Co');
  assert.match(whoami.out(), 'owner');
});

const run = async (args: string[], cwd = work, expected = 0) => {
  const r = cli(args, cwd);
  const code = await r.done;
  assert.is(code, expected, `platform ${args.join(' ')}: ${r.out()}`);
  return r.out();
};

test('publish with the CLI, then see the app, its releases, and roll back in the console', async () => {
  await run(['init', 'site']);
  const site = path.join(work, 'site');
  await run(['publish', '--message', 'first'], site);
  await writeFile(path.join(site, 'public', 'index.html'), '<h1>second</h1>');
  await run(['publish', '--message', 'second'], site);
  await page.goto(`${CONSOLE}/`);
  const row = page.getByRole('row', { name: /site/ });
  await row.getByText('live').waitFor();
  await shot('5-apps');
  await row.getByRole('link', { name: 'site' }).click();
  await page.getByRole('heading', { name: 'site' }).waitFor();
  await page.getByRole('cell', { name: 'second' }).waitFor();
  await shot('6-releases');
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('row', { name: /first/ }).getByRole('button', { name: 'Roll back' }).click();
  await page.getByText(/Rolled back: rel_\w+ is live\./).waitFor();
  await page.getByRole('row', { name: /first/ }).getByLabel('live').waitFor();
});

test('a release waiting for a secret says so; setting the secret from the console', async () => {
  const site = path.join(work, 'site');
  const manifest = JSON.parse(await readFile(path.join(site, 'manifest.platform.json'), 'utf8'));
  manifest.resources = { secrets: { required: ['API_TOKEN'] } };
  await writeFile(path.join(site, 'manifest.platform.json'), JSON.stringify(manifest));
  await run(['publish', '--message', 'needs a token'], site, 3); // stored, waiting for the secret
  await page.reload();
  const waiting = page.getByRole('row', { name: /needs a token/ });
  await waiting.getByText('Waiting for secrets').waitFor();
  await shot('7-pending-secrets');
  await waiting.getByRole('link', { name: 'set API_TOKEN' }).click();
  await page.getByRole('heading', { name: 'site: secrets' }).waitFor();
  assert.is(await page.getByLabel('Name').inputValue(), 'API_TOKEN');
  await page.getByRole('cell', { name: 'missing' }).waitFor();
  await page.getByLabel('Value').fill('s3cret-value');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved API_TOKEN.').waitFor();
  await page
    .getByRole('row', { name: /API_TOKEN/ })
    .getByText('set')
    .waitFor();
  assert.not.match(await page.content(), 's3cret-value', 'the value is not shown again');
  await shot('8-secrets');
  await page.getByRole('link', { name: 'Resources' }).click();
  await page.getByText('The live release declares no resources.').waitFor();
  await run(['publish', '--message', 'with the token'], path.join(work, 'site'));
  await page.reload();
  await page.getByRole('heading', { name: 'Required secrets' }).waitFor();
  await shot('9-resources');
});

test('run a job now from the resources page, with a payload; its run shows in the events, and the row it wrote in the resources', async () => {
  const site = path.join(work, 'site');
  const manifest = JSON.parse(await readFile(path.join(site, 'manifest.platform.json'), 'utf8'));
  manifest.runtime = { ...manifest.runtime, server_entry: 'server.js' };
  manifest.resources = {
    ...manifest.resources,
    jobs: { report: { max_attempts: 1 } },
    data: { collections: { reports: { fields: { team: 'string' } } } },
    files: { stores: { uploads: {} } },
  };
  await writeFile(path.join(site, 'manifest.platform.json'), JSON.stringify(manifest));
  await writeFile(
    path.join(site, 'server.js'),
    `export default { async job(event, ctx) { await ctx.data.collection('reports').create({ team: event.payload.team }); ctx.log.info('report for ' + event.payload.team); } };`,
  );
  await run(['publish', '--message', 'with a job'], site);
  await page.reload();
  const row = page.getByRole('row', { name: /report/ });
  await row.getByText('when enqueued').waitFor();
  await row.getByLabel('Payload for report').fill('{ "team": ');
  await row.getByRole('button', { name: 'Run now' }).click();
  await row.getByText('The payload is not JSON.').waitFor();
  await row.getByLabel('Payload for report').fill('{ "team": "blue" }');
  await row.getByRole('button', { name: 'Run now' }).click();
  await row.getByText(/Queued job_\w+\./).waitFor();
  await shot('9b-run-job');
  await row.getByRole('link', { name: 'See its events' }).click();
  await page.getByRole('cell', { name: 'report for blue' }).waitFor({ timeout: 15_000 });
  await page.getByRole('cell', { name: 'job.succeeded' }).first().waitFor({ timeout: 15_000 });
  // what the job wrote: one row of 16 bytes ({"team": "blue"}), and an empty store
  await page.getByRole('link', { name: 'Resources' }).click();
  await page.getByRole('row', { name: 'reports 1 16 bytes' }).waitFor();
  await page.getByRole('row', { name: /^uploads 0 0 bytes/ }).waitFor();
  await page.getByText('This app stores 16 bytes of data rows and files').waitFor();
  await shot('9c-resources-usage');
});

test('the event log tails live', async () => {
  await page.getByRole('link', { name: 'Events' }).click();
  await page.getByRole('cell', { name: 'secret.set' }).first().waitFor();
  await page.getByLabel('Live tail').check();
  await run(['secrets', 'set', 'SECOND', 'value-two'], path.join(work, 'site'));
  await page.getByRole('cell', { name: 'Secret SECOND was set.' }).waitFor({ timeout: 10_000 });
  await page.getByLabel('Level').selectOption('warn');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByRole('cell', { name: 'release.rolled_back' }).waitFor();
  await shot('10-events');
});

test('API keys: the raw key once, rename, revoke', async () => {
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Name').fill('CI deploys');
  await page.getByRole('button', { name: 'Create key' }).click();
  const raw = await page.locator('#raw-key').innerText();
  assert.match(raw, /^ap_[A-Za-z0-9_-]{43}$/);
  assert.is((await h.call('GET', '/v0/accounts', { key: raw })).status, 200, 'the key shown works');
  await shot('11-keys');
  page.once('dialog', (d) => void d.accept());
  await page
    .getByRole('row', { name: /CI deploys/ })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await page.getByText('Revoked CI deploys.').waitFor();
  assert.is((await h.call('GET', '/v0/accounts', { key: raw })).status, 401);
  await page.reload();
  assert.not.match(await page.content(), raw, 'never shown again');
});

test('the account page: plan, usage bars with a warning colour, flags with reasons, a plan-change preview', async () => {
  const account = await h.deps.db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', 'Browser Co')
    .executeTakeFirstOrThrow();
  const app = await h.deps.db
    .selectFrom('apps')
    .select('id')
    .where('account_id', '=', account.id)
    .where('name', '=', 'site')
    .executeTakeFirstOrThrow();
  await setPlan(h.deps, { accountId: account.id, planKey: 'starter' });
  // usage as the request meter and the domains feature record it: 900 000 of Starter's 1 000 000 requests, one slug
  const month = new Date().toISOString().slice(0, 7) + '-01';
  await sql`insert into account_usage (account_id, period_start, metric, value) values (${account.id}, ${month}::date, 'requests.monthly', 900000)`.execute(
    h.deps.db,
  );
  await sql`insert into app_routes (id, app_id, account_id, route_type, hostname, status) values ('route_browsertest', ${app.id}, ${account.id}, 'slug', 'browser-site.apps.localhost', 'active')`.execute(
    h.deps.db,
  );
  await setFlag(h.deps, {
    appId: app.id,
    flag: 'suspended',
    reason: 'Reported as spam (ticket 7)',
    clear: false,
  });

  await page.getByRole('link', { name: 'Account' }).click();
  await page.locator('#plan-name', { hasText: 'Starter' }).waitFor();
  const requests = page.locator('.usage', { hasText: 'Requests this month' });
  assert.match(await requests.innerText(), '900,000 of 1,000,000 (90%)');
  assert.match((await requests.getAttribute('class'))!, 'warn', 'over 80%: the warning colour');
  assert.match(
    (await page.locator('.usage', { hasText: 'Published apps' }).getAttribute('class'))!,
    'good',
  );
  // stored bytes read as bytes, against Starter's 10 GiB
  assert.match(
    await page.locator('.usage', { hasText: 'App data and files' }).innerText(),
    /[\d.]+ (bytes|KiB|MiB) of 10 GiB \(0%\)/,
  );
  assert.match(await page.locator('#flags').innerText(), 'Reported as spam (ticket 7)');
  assert.match(
    await page.locator('#warnings').innerText(),
    /900,000 of 1,000,000 monthly requests used \(90%\)/,
  );
  await page.getByRole('cell', { name: 'webhooks' }).waitFor();
  assert.is(
    await page.getByRole('row', { name: /storage\.bytes\.max/ }).innerText(),
    'storage.bytes.max\t10 GiB',
  );
  await shot('12a-account');

  await page.getByLabel('Plan').selectOption('free');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.locator('#preview-verdict').waitFor();
  const preview = await page.locator('#preview-result').innerText();
  assert.match(preview, 'once the changes below are made');
  assert.match(preview, 'browser-site.apps.localhost');
  assert.match(preview, 'route_browsertest');
  await shot('12b-account-preview');

  await setFlag(h.deps, { appId: app.id, flag: 'suspended', clear: true });
  await setPlan(h.deps, { accountId: account.id, planKey: 'free', force: true });
  await sql`delete from app_routes where id = 'route_browsertest'`.execute(h.deps.db);
});

test('domains: add a slug and a domain, the records with copy buttons, the diagnosis in plain words, verify, disable, remove', async () => {
  const account = await h.deps.db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', 'Browser Co')
    .executeTakeFirstOrThrow();
  await setPlan(h.deps, { accountId: account.id, planKey: 'starter' });
  await page.goto(`${CONSOLE}/`);
  await page.getByRole('link', { name: 'site' }).click();
  await page.getByRole('link', { name: 'Domains' }).click();
  await page.getByText('No slugs or custom domains yet.').waitFor();
  await page.getByLabel('Slug').fill('browser-shop');
  await page.getByRole('button', { name: 'Add slug' }).click();
  await page
    .getByText(`The app now also serves at http://browser-shop.apps.localhost:${port}/`)
    .waitFor();
  await page.getByRole('link', { name: 'browser-shop.apps.localhost' }).waitFor();

  await page.getByLabel('Domain').fill('www.browser-shop.test');
  await page.getByRole('button', { name: 'Add domain' }).click();
  const card = page.locator('article[data-hostname="www.browser-shop.test"]');
  await card.getByText('waiting for DNS').waitFor();
  await card.getByRole('cell', { name: '_platform-challenge.www.browser-shop.test' }).waitFor();
  assert.ok(
    (await card.getByRole('button', { name: 'Copy' }).count()) >= 4,
    'a copy button for each name and value',
  );
  await card.getByText('Not checked yet.').waitFor();
  await card.getByRole('button', { name: 'Verify' }).click();
  await page
    .getByText(
      /^www\.browser-shop\.test is not verified yet: No TXT record at _platform-challenge\.www\.browser-shop\.test/,
    )
    .waitFor();
  await card
    .getByText(/✗ No TXT record at _platform-challenge\.www\.browser-shop\.test: create TXT/)
    .waitFor();
  await card.getByText(/No CNAME at www\.browser-shop\.test/).waitFor();
  await shot('16-domains-pending');

  const token = await h.deps.db
    .selectFrom('app_routes')
    .select('verification_token')
    .where('hostname', '=', 'www.browser-shop.test')
    .executeTakeFirstOrThrow();
  dns.set('_platform-challenge.www.browser-shop.test', [
    { type: 'TXT', value: token.verification_token! },
  ]);
  dns.set('www.browser-shop.test', [{ type: 'CNAME', value: 'apps.localhost' }]);
  await card.getByRole('button', { name: 'Verify' }).click();
  await page.getByText('www.browser-shop.test is verified and serves the app.').waitFor();
  await card.getByText('active', { exact: true }).waitFor();
  await shot('16b-domains-active');

  const slugCard = page.locator('article[data-hostname="browser-shop.apps.localhost"]');
  await slugCard.getByRole('button', { name: 'Disable' }).click();
  await page
    .getByText('browser-shop.apps.localhost is disabled; the app still serves at its own origin.')
    .waitFor();
  assert.is((await h.call('GET', '/', { host: 'browser-shop.apps.localhost' })).status, 404);
  await slugCard.getByRole('button', { name: 'Enable' }).click();
  await page.getByText('browser-shop.apps.localhost serves the app again.').waitFor();
  page.once('dialog', (d) => void d.accept());
  await card.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed www.browser-shop.test.').waitFor();
  assert.is((await h.call('GET', '/', { host: 'www.browser-shop.test' })).status, 410);
  await setPlan(h.deps, { accountId: account.id, planKey: 'free', force: true });
});

test('analytics: the chart, breakdowns and top paths; the plan clamp; a Free account sees what it would get', async () => {
  const account = await h.deps.db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', 'Browser Co')
    .executeTakeFirstOrThrow();
  const app = await h.deps.db
    .selectFrom('apps')
    .select('id')
    .where('account_id', '=', account.id)
    .where('name', '=', 'site')
    .executeTakeFirstOrThrow();
  await setPlan(h.deps, { accountId: account.id, planKey: 'starter' });
  const host = `${app.id}.apps.localhost`;
  for (let i = 0; i < 4; i++)
    await h.call('GET', '/', { host, headers: { referer: 'https://news.example/story' } });
  await h.call('GET', '/orders/12345', { host });
  await h.server.runtime.analytics.flush();
  await page.goto(`${CONSOLE}/apps/${app.id}/analytics`);
  await page.locator('#totals', { hasText: /^5 requests/ }).waitFor();
  await page.locator('#chart canvas').waitFor();
  await page.getByRole('cell', { name: '/orders/:id' }).waitFor();
  await page.getByRole('cell', { name: 'news.example' }).waitFor();
  await shot('17-analytics');
  await page.getByLabel('Range').selectOption('30d');
  await page.getByText('Your plan keeps analytics for 7 days').waitFor();
  await setPlan(h.deps, { accountId: account.id, planKey: 'free', force: true });
  await page.reload();
  await page.getByRole('heading', { name: 'Analytics are part of paid plans' }).waitFor();
  await page.getByText('Available from the Starter plan.').waitFor();
  assert.ok(!(await page.getByLabel('Range').isVisible()), 'no range to pick without analytics');
  await shot('17b-analytics-free');
  await page.goto(`${CONSOLE}/`);
});

test("an app user's session on a custom domain is not the canonical origin's, and the reverse", async () => {
  const u = await createUser(h.deps.db, { email: uniqueEmail('cookies') });
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  const server = `export default { fetch() { return new Response('server'); } };`;
  const pub = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: {
      app: { name: 'members' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      resources: { auth: { mode: 'app_users', public_signup: true } },
      files: [
        {
          path: 'public/index.html',
          content_type: 'text/html; charset=utf-8',
          content_base64: Buffer.from('<h1>members</h1>').toString('base64'),
        },
        {
          path: 'server.js',
          content_type: 'text/javascript',
          content_base64: Buffer.from(server).toString('base64'),
        },
      ],
    },
  });
  assert.is(pub.status, 200, pub.text);
  const appId = pub.body.app_id as string;
  await h.api('POST /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: appId },
    body: { hostname: 'members-shop.localhost' },
  });
  await operatorVerify(h.deps, 'members-shop.localhost');

  const visitor = await browser.newContext();
  const tab = await visitor.newPage();
  tab.on('pageerror', (e) => pageErrors.push(`${tab.url()}: ${e.message}`));
  const custom = `http://members-shop.localhost:${port}`;
  const canonical = `http://${appId}.apps.localhost:${port}`;
  const session = () => tab.evaluate(async () => (await fetch('/_platform/auth/session')).status);
  const post = (path: string, body: unknown) =>
    tab.evaluate(
      async ([p, b]) =>
        (
          await fetch(p as string, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(b),
          })
        ).status,
      [path, body] as const,
    );
  await tab.goto(custom + '/');
  await tab.getByRole('heading', { name: 'members' }).waitFor();
  assert.is(
    await post('/_platform/auth/signup', {
      email: 'visitor@example.com',
      password: 'correct horse battery',
    }),
    201,
  );
  assert.is(await session(), 200, 'signed in on the custom domain');
  await tab.goto(canonical + '/');
  assert.is(await session(), 401, 'not signed in on the canonical origin');
  assert.is(
    await post('/_platform/auth/login', {
      email: 'visitor@example.com',
      password: 'correct horse battery',
    }),
    200,
  );
  assert.is(await session(), 200);
  assert.is(await post('/_platform/auth/logout', {}), 200);
  assert.is(await session(), 401, 'signed out on the canonical origin');
  await tab.goto(custom + '/');
  assert.is(await session(), 200, 'still signed in on the custom domain');
  const cookies = (await visitor.cookies()).filter((c) => c.name === '__Host-platform_app_session');
  assert.equal(
    cookies.map((c) => c.domain),
    ['members-shop.localhost'],
    'the cookie is bound to the host that set it',
  );
  await visitor.close();
});

test('billing: upgrade through Checkout; the plan changes when Stripe says so, not on the way back', async () => {
  const account = await h.deps.db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', 'Browser Co')
    .executeTakeFirstOrThrow();
  await page.getByRole('link', { name: 'Billing' }).click();
  await page.locator('#current-plan', { hasText: 'Free' }).waitFor();
  assert.is(await page.locator('#plan-source').innerText(), 'Nothing bought yet.');
  await shot('12c-billing');
  await page.getByRole('button', { name: 'Upgrade to Starter' }).click();
  await page.waitForURL(new RegExp(`^${fakeStripe.url}/checkout/`));
  const session = [...fakeStripe.sessions.values()].find((x) => x.url === page.url())!;
  assert.is(session.client_reference_id, account.id);
  const { subscription } = fakeStripe.completeCheckout(String(session.id));
  // back from Checkout before Stripe's event: the page waits; then the signed event arrives
  await page.goto(`${CONSOLE}/billing?checkout=success&session_id=${session.id}`);
  await page.getByText('your plan changes as soon as Stripe confirms it').waitFor();
  assert.is(
    await page.locator('#current-plan').innerText(),
    'Free',
    'the redirect alone grants nothing',
  );
  const event = {
    id: 'evt_browser1',
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        customer: subscription.customer,
        client_reference_id: account.id,
        subscription: subscription.id,
      },
    },
  };
  const payload = JSON.stringify(event);
  const header = await new Stripe(STRIPE_KEY).webhooks.generateTestHeaderStringAsync({
    payload,
    secret: WHSEC,
  });
  assert.is(
    (
      await h.call('POST', '/v0/payments/webhook', {
        rawBody: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
      })
    ).status,
    200,
  );
  await page.locator('#current-plan', { hasText: 'Starter' }).waitFor({ timeout: 20_000 });
  await page.getByText('You are on Starter now.').waitFor();
  assert.is(await page.locator('#plan-source').innerText(), 'From your Stripe subscription.');
  await page.getByRole('button', { name: 'Manage billing in Stripe' }).waitFor();
  await shot('12d-billing-starter');
  await setPlan(h.deps, { accountId: account.id, planKey: 'free', force: true });
});

test('members: invite someone; at 360 px wide the page still works; sign out keeps the CLI key', async () => {
  await page.getByRole('link', { name: 'Members' }).click();
  await page.getByRole('cell', { name: /browser-person/ }).waitFor();
  const invitee = uniqueEmail('teammate');
  await page.getByLabel('E-mail').fill(invitee);
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await page.getByText(`Invitation sent to ${invitee}.`).waitFor();
  await page.getByRole('cell', { name: invitee }).waitFor();
  assert.match((await smtp.next(invitee)).text, 'as viewer');
  await shot('12-members');
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${CONSOLE}/`);
  await page.getByRole('link', { name: 'site' }).waitFor();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `no sideways scrolling at 360 px (${overflow}px)`);
  await shot('13-apps-360');
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${CONSOLE}/`);
  await page.getByRole('link', { name: 'site' }).click();
  await page.getByRole('cell', { name: /with the token/ }).waitFor();
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.is(background, 'rgb(18, 21, 27)', 'the dark palette follows the preference');
  await shot('13b-releases-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${CONSOLE}/sign-in`);
  await page.goto(`${CONSOLE}/keys`);
  await page.waitForURL(/\/sign-in\?next=/);
  await run(['whoami']);
  await run(['logout', '--revoke']);
  const after = await h.deps.db
    .selectFrom('api_keys')
    .select(['name', 'revoked_at'])
    .where('name', 'like', 'platform CLI on %')
    .execute();
  assert.ok(after.length === 1 && after[0]!.revoked_at, 'logout --revoke revoked the key');
});

test('the docs host: reference and guides, readable in the browser', async () => {
  const DOCS = `http://docs.localhost:${port}`;
  await page.goto(`${DOCS}/reference`);
  await page.getByRole('heading', { name: 'API reference (v0)' }).waitFor();
  await page.locator('#publishNewApp').getByText('bundle_too_large', { exact: true }).waitFor();
  await shot('14-docs-reference', false);
  await page.locator('#publishNewApp').scrollIntoViewIfNeeded();
  await shot('14b-docs-operation', false);
  await page.getByRole('link', { name: 'Quick start' }).click();
  await page.getByRole('heading', { name: 'Quick start' }).waitFor();
  await shot('15-docs-quick-start');
  const schema = await page.goto(`${DOCS}/schemas/manifest.v0.json`);
  assert.is((await schema!.json()).title, 'manifest.platform.json (v0)');
});

test('no page of the tour threw a script error', () => {
  assert.equal(pageErrors, []);
});

test.after(async () => {
  await browser.close();
  await live.close();
  await worker.stop();
  await h.close();
  await fakeStripe.close();
  await dns.close();
  await smtp.close();
  await rm(work, { recursive: true, force: true });
});
test.run();
