import { spawn } from 'node:child_process';
import { waitFor } from '../_lib/apps.ts';
import { publishRoomHeld } from '../../src/apps/routes.ts';
import net from 'node:net';
import { once } from 'node:events';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReleaseList } from '../../src/apps/schemas.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { site as bundle } from '../_lib/bundles.ts';
import { setPlan } from '../../src/plans/operator.ts';
import { startDns } from '../_lib/dns-server.ts';
import { BIN, cliFor, writeSite } from '../_lib/cli.ts';

const dns = await startDns();
const h = await createHarness({ PLATFORM_DNS_SERVERS: dns.server });
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-${process.pid}`);

const { cli, start } = cliFor({ url: live.url, key: u.api_key, work });
const site = (name: string, manifest: unknown, files: Record<string, string>) =>
  writeSite(work, name, manifest, files);

const MANIFEST = {
  app: { name: 'CLI site' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
  resources: { secrets: { required: ['GREETING'] } },
};
let dir = '';
let appId = '';

test.before(async () => {
  await mkdir(work, { recursive: true });
  dir = await site('app', MANIFEST, {
    'public/index.html': '<h1>from the cli</h1>',
    'public/style.css': 'body{}',
    'server.js':
      "export default { fetch(req, ctx) { return new Response('hello ' + (ctx.secrets.get('GREETING') ?? 'nobody')) } };",
    '.env': 'SECRET=1',
    '.git/HEAD': 'ref',
    'node_modules/x/index.js': 'x',
    'notes/draft.md': 'draft',
    '.platformignore': 'notes/\n',
  });
});

test('publish a folder (static + server): stored until its secret is set, files filtered, folder linked', async () => {
  const r = await cli(['publish', dir, '-m', 'first']);
  assert.is(r.code, 3, `not live, waiting for secrets: exit 3 ${r.stderr}`);
  assert.match(r.stdout, 'stored, not live');
  assert.match(r.stdout, 'Missing secrets: GREETING');
  assert.match(r.stdout, 'platform secrets set GREETING');
  const link = JSON.parse(await readFile(path.join(dir, '.platform', 'app.json'), 'utf8'));
  appId = link.app_id;
  assert.match(appId, /^[a-z0-9]{12,24}$/);
  const rel = await h.deps.db
    .selectFrom('release_files')
    .innerJoin('releases', 'releases.id', 'release_files.release_id')
    .select(['release_files.path', 'release_files.content_type'])
    .where('releases.app_id', '=', appId)
    .execute();
  assert.equal(rel.map((f) => f.path).sort(), [
    'public/index.html',
    'public/style.css',
    'server.js',
  ]);
  assert.is(
    rel.find((f) => f.path === 'public/style.css')!.content_type,
    'text/css; charset=utf-8',
  );
});

test('a release whose server module does not load: exit 5, and the reason is printed', async () => {
  const broken = await site(
    'broken',
    {
      app: { name: 'Broken' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    },
    { 'public/index.html': 'hi', 'server.js': 'export default { fetch( {' },
  );
  // the CLI's own check would catch this syntax error (test/cli/build.test.ts); unchecked, the server's does
  const r = await cli(['publish', broken, '--no-bundle']);
  assert.is(r.code, 5, r.stdout + r.stderr);
  assert.match(r.stdout, 'stored, not live');
  assert.match(r.stdout, 'The server module cannot go live');
  assert.match(r.stdout, /SyntaxError/);
  const json = await cli(['publish', broken, '--json', '--no-bundle']);
  assert.is(json.code, 5, 'the exit code holds with --json');
  assert.is(JSON.parse(json.stdout).activation.status, 'failed');
});

test('a module with no handler for a declared job: exit 5 with the reason; --allow-missing-handlers lets it go live', async () => {
  const lacking = await site(
    'lacking',
    {
      app: { name: 'No job handler' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      resources: { jobs: { nightly: { trigger: 'schedule', schedule: 'daily' } } },
    },
    {
      'public/index.html': 'hi',
      'server.js': "export default { fetch() { return new Response('up') } };",
    },
  );
  const r = await cli(['publish', lacking]);
  assert.is(r.code, 5, r.stdout + r.stderr);
  assert.match(r.stdout, 'stored, not live');
  assert.match(r.stdout, 'no job handler for the declared job nightly');
  assert.match(r.stdout, '--allow-missing-handlers');
  const anyway = await cli(['publish', lacking, '--allow-missing-handlers']);
  assert.is(anyway.code, 0, anyway.stdout + anyway.stderr);
  assert.match(anyway.stdout, 'published');
});

test('secrets set reads the value from stdin and never echoes it; publish again goes to the same app and goes live', async () => {
  const set = await cli(['secrets', 'set', 'GREETING'], { cwd: dir, stdin: 'world-value-123\n' });
  assert.is(set.code, 0, set.stderr);
  assert.not.match(set.stdout + set.stderr, 'world-value-123');
  const list = await cli(['secrets', 'list'], { cwd: dir });
  assert.match(list.stdout, /GREETING\s+set/);
  assert.not.match(list.stdout, 'world-value-123');
  const again = await cli(['publish', '.', '-m', 'second'], { cwd: dir });
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, 'published');
  assert.match(again.stdout, `http://${appId}.apps.localhost:8787`);
  const res = await h.server.request(`http://${appId}.apps.localhost/api`);
  assert.is(await res.text(), 'hello world-value-123');
  const apps = await cli(['apps']);
  assert.match(apps.stdout, appId);
});

test('releases, rollback and --json', async () => {
  const json = await cli(['releases', '--json'], { cwd: dir });
  assert.is(json.code, 0);
  const body = JSON.parse(json.stdout);
  assert.is(body.app_id, appId);
  assert.is(body.releases.length, 2);
  const human = await cli(['releases'], { cwd: dir });
  assert.match(human.stdout, 'RELEASE_ID');
  assert.match(human.stdout, 'second');
  // Publish a third release, then roll back to the second.
  await writeFile(path.join(dir, 'public/index.html'), '<h1>third</h1>');
  await cli(['publish'], { cwd: dir });
  const second = (body as ReleaseList).releases.find((r) => r.message === 'second')!.release_id;
  const rb = await cli(['rollback', second], { cwd: dir });
  assert.is(rb.code, 0, rb.stderr);
  assert.match(rb.stdout, 'rolled back');
  const page = await h.server.request(`http://${appId}.apps.localhost/`);
  assert.is(await page.text(), '<h1>from the cli</h1>');
  const bad = await cli(['rollback', 'rel_00000000000000000000'], { cwd: dir });
  assert.is(bad.code, 1);
  assert.match(bad.stderr, 'not_found');
});

test('events prints the log; --type filters; --follow prints new events until interrupted', async () => {
  const ev = await cli(['events', '--limit', '50'], { cwd: dir });
  assert.is(ev.code, 0, ev.stderr);
  assert.match(ev.stdout, 'release.created');
  assert.match(ev.stdout, 'secret.set');
  const searched = await cli(['events', '--search', 'was set'], { cwd: dir });
  assert.is(searched.code, 0, searched.stderr);
  assert.match(searched.stdout, 'secret.set');
  assert.not.match(searched.stdout, 'release.created', '--search filters');
  assert.match(
    searched.stdout,
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /m,
    'a readable local time starts each line',
  );
  assert.match(searched.stdout, /name=\w+/, 'details as key=value');
  const typed = await cli(['events', '--type', 'release.rolled_back', '--json'], { cwd: dir });
  const parsed = JSON.parse(typed.stdout);
  assert.ok(parsed.events.length === 1 && parsed.events[0].type === 'release.rolled_back');
  // --follow: start it, cause an event, see it printed, interrupt.
  const child = spawn(process.execPath, [BIN, 'events', '--follow', '--interval', '100'], {
    cwd: dir,
    env: { ...process.env, PLATFORM_API_URL: live.url, PLATFORM_API_KEY: u.api_key, NO_COLOR: '1' },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  // it printed the newest page: it follows from there
  await waitFor(async () => out.includes('release.created'));
  await h.call('PUT', `/v0/apps/${appId}/secrets/FOLLOW_ME`, {
    key: u.api_key,
    body: { value: 'x' },
  });
  for (let i = 0; i < 50 && !out.includes('FOLLOW_ME'); i++)
    await new Promise((r) => setTimeout(r, 100));
  child.kill('SIGINT');
  const code = await new Promise((r) => child.on('close', r));
  assert.match(out, 'Secret FOLLOW_ME was set');
  assert.is(code, 0);
});

test('publish sends again, after the wait the platform asks for, when it is too busy with large publishes to take this one', async () => {
  const busy = await site(
    'busy',
    { app: { name: 'Busy' }, runtime: { static_root: 'public' } },
    { 'public/index.html': '<h1>patient</h1>' },
  );
  // two publishes of this account declaring 80 MiB each whose senders stall: the account's 160 MiB of room is taken
  const stalled = await Promise.all(
    [0, 1].map(async () => {
      const s = net.connect(live.port, '127.0.0.1');
      await once(s, 'connect');
      s.write(
        `PUT /v0/apps HTTP/1.1\r\nHost: ${h.config.hosts.api}\r\nAuthorization: Bearer ${u.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${80 * 1024 * 1024}\r\n\r\n{"app":`,
      );
      return s;
    }),
  );
  try {
    await waitFor(async () => publishRoomHeld(u.account_id) >= 160 * 1024 * 1024); // their room taken
    const run = start(['publish', busy]);
    let ended = false;
    void run.exited.then(() => (ended = true));
    const end = Date.now() + 30_000;
    while (!/busy/.test(run.out.stderr) && !ended && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(
      run.out.stderr,
      'The platform is busy with other publishes; sending again in 5 s (retry 1 of 3).',
    );
    for (const s of stalled) s.destroy(); // the senders give up: the room comes back before the retry
    assert.is(await run.exited, 0, run.out.stdout + run.out.stderr);
    assert.match(run.out.stdout, '✔ published');
    const link = JSON.parse(await readFile(path.join(busy, '.platform', 'app.json'), 'utf8'));
    assert.is(
      (await h.call('GET', `/v0/apps/${link.app_id}/releases`, { key: u.api_key })).body.releases
        .length,
      1,
      'one release: the refused attempt stored nothing',
    );
  } finally {
    for (const s of stalled) s.destroy();
  }
});

test('an invalid manifest exits non-zero with the contract code on stderr', async () => {
  const bad = await site(
    'bad',
    { app: { name: 'bad' }, runtime: { static_root: 'dist' } },
    { 'public/index.html': 'x' },
  );
  const r = await cli(['publish', bad]);
  assert.is(r.code, 1);
  assert.match(r.stderr, 'missing_static_root');
  assert.not.match(r.stderr, '    at ', 'no stack trace');
  const extra = await site(
    'extra',
    { app: { name: 'x' }, runtime: { static_root: 'public' }, files: [] },
    { 'public/index.html': 'x' },
  );
  const e = await cli(['publish', extra]);
  assert.is(e.code, 1);
  assert.match(e.stderr, 'invalid_manifest');
  // a syntax error is shown where it is: file, line and column, the line, a caret
  const typo = await site('typo', {}, { 'public/index.html': 'x' });
  await writeFile(
    path.join(typo, 'manifest.platform.json'),
    '{\n  "app": { "name": "typo" },\n  "runtime": { "static_root": "public" }\n  "resources": {}\n}\n',
  );
  const t = await cli(['publish', typo]);
  assert.is(t.code, 1);
  assert.match(t.stderr, 'invalid_manifest');
  assert.match(
    t.stderr,
    /manifest\.platform\.json:4:3: not valid JSON: Expected ',' or '}' after property value/,
  );
  assert.match(t.stderr, /\n\s+4 \| {3}"resources": \{\}\n\s+\| {3}\^/);
  const none = await cli(['publish', path.join(work, 'nowhere')]);
  assert.is(none.code, 1);
  assert.match(none.stderr, 'platform init');
});

test('no key, a bad key and a server that is down each get a one-line hint', async () => {
  const noKey = await cli(['apps'], {
    env: { PLATFORM_API_KEY: undefined, XDG_CONFIG_HOME: path.join(work, 'empty-config') },
  });
  assert.is(noKey.code, 1);
  assert.match(noKey.stderr, 'no_api_key');
  assert.match(noKey.stderr, 'platform login');
  const badKey = await cli(['apps'], { env: { PLATFORM_API_KEY: `ap_${'x'.repeat(43)}` } });
  assert.is(badKey.code, 1);
  assert.match(badKey.stderr, 'unauthorized');
  const down = await cli(['apps'], { env: { PLATFORM_API_URL: 'http://127.0.0.1:1' } });
  assert.is(down.code, 1);
  assert.match(down.stderr, 'Cannot reach the platform');
  assert.match(down.stderr, 'npm start');
});

test('login stores the key with mode 0600; whoami; logout forgets it', async () => {
  const env = { PLATFORM_API_KEY: undefined, XDG_CONFIG_HOME: path.join(work, 'login-config') };
  const bad = await cli(['login', '--api-key', 'nope'], { env });
  assert.is(bad.code, 1);
  const r = await cli(['login', '--api-key', u.api_key], { env });
  assert.is(r.code, 0, r.stderr);
  const file = path.join(work, 'login-config', 'platform', 'credentials.json');
  assert.is((await stat(file)).mode & 0o777, 0o600);
  assert.not.match(r.stdout, u.api_key);
  const who = await cli(['whoami'], { env: { ...env, PLATFORM_API_URL: undefined } });
  assert.is(who.code, 0, who.stderr);
  assert.match(who.stdout, u.account_id);
  assert.match(who.stdout, u.api_key.slice(0, 11));
  assert.not.match(who.stdout, u.api_key);
  const out = await cli(['logout'], { env });
  assert.is(out.code, 0);
  const after = await cli(['apps'], { env: { ...env, PLATFORM_API_URL: undefined } });
  assert.is(after.code, 1);
  assert.match(after.stderr, 'no_api_key');
});

test('init writes a starter that publishes as it is; open prints the origin; unpublish needs --yes; erase --confirm', async () => {
  const starter = path.join(work, 'starter');
  await rm(starter, { recursive: true, force: true });
  const i = await cli(['init', starter]);
  assert.is(i.code, 0, i.stderr);
  const p = await cli(['publish', starter, '--json']);
  assert.is(p.code, 0, p.stderr);
  const result = JSON.parse(p.stdout);
  assert.is(result.status, 'published');
  const o = await cli(['open'], { cwd: starter });
  assert.is(o.stdout.trim(), result.origin);
  const noYes = await cli(['unpublish'], { cwd: starter });
  assert.is(noYes.code, 1);
  assert.match(noYes.stderr, '--yes');
  const yes = await cli(['unpublish', '--yes'], { cwd: starter });
  assert.is(yes.code, 0, yes.stderr);
  const gone = await h.server.request(`http://${result.app_id}.apps.localhost/`);
  assert.is(gone.status, 404);
  // erase wants the app's id typed again, then reports what it erased
  const unconfirmed = await cli(['erase'], { cwd: starter });
  assert.is(unconfirmed.code, 1);
  assert.match(unconfirmed.stderr, `--confirm ${result.app_id}`);
  const erased = await cli(['erase', '--confirm', result.app_id], { cwd: starter });
  assert.is(erased.code, 0, erased.stderr);
  assert.match(erased.stdout, `erased ${result.app_id}: 0 rows, 0 files, 0 app users, 0 secrets`);
  const help = await cli(['secrets', 'set', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, 'Examples:');
  // `platform --help` lists every command, subcommands included, each with a one-line description
  const all = await cli(['--help']);
  const listed = all.stdout.split('\n').filter((l) => l.startsWith('  platform '));
  for (const cmd of [
    'init [dir]',
    'publish [dir]',
    'dev [dir]',
    'jobs run <job_name>',
    'secrets set <NAME> [VALUE]',
    'secrets list',
    'domains verify <HOSTNAME>',
    'billing upgrade <plan>',
    'slugs rm <SLUG>',
    'events',
    'analytics',
    'resources',
    'erase',
    'login',
  ]) {
    const line = listed.find((l) => l.startsWith(`  platform ${cmd} `));
    assert.ok(
      line && /\S\s{2,}\S/.test(line.trim()),
      `platform --help lists ${cmd} with a description`,
    );
  }
});

test('platform account: plan, usage bars, warnings and a plan-change preview; --json', async () => {
  const owner = await newUser(h);
  await setPlan(h.deps, { accountId: owner.account_id, planKey: 'starter' });
  for (let i = 0; i < 8; i++)
    assert.is(
      (await h.call('PUT', '/v0/apps', { key: owner.api_key, body: bundle() })).status,
      200,
    );
  // one app with 6 collections: Starter allows 20, Free 5
  const collections = Object.fromEntries(
    Array.from({ length: 6 }, (_, i) => [`c${i}`, { fields: { title: 'string' } }]),
  );
  assert.is(
    (
      await h.call('PUT', '/v0/apps', {
        key: owner.api_key,
        body: bundle({ app: { name: 'Data app' }, resources: { data: { collections } } }),
      })
    ).status,
    200,
  );
  const env = { PLATFORM_API_KEY: owner.api_key };
  const r = await cli(['account', '--preview', 'free'], { env });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, `Account ${owner.account_id}`);
  assert.match(r.stdout, /Plan\s+starter\s+billing active/);
  assert.match(r.stdout, /published apps\s+█{18}░{2} 9 of 10 \(90%\)/);
  assert.match(r.stdout, '9 of 10 apps used (90%)');
  assert.match(r.stdout, /app data and files\s+░{20} 0 bytes of 10 GiB \(0%\)/);
  assert.match(r.stdout, /Moving to free\s+does not fit yet/);
  assert.match(r.stdout, /App "Data app" \(\w+\): it declares 6 data collections; Free allows 5\./);
  const j = await cli(['account', '--json'], { env });
  assert.is(j.code, 0, j.stderr);
  const parsed = JSON.parse(j.stdout);
  assert.is(parsed.status.plan_key, 'starter');
  assert.is(parsed.status.usage.apps, 9);
  assert.is(parsed.limits.deployment_limits['apps.max'], 10);
  const other = await newUser(h);
  const stranger = await cli(['account', '--account', other.account_id], { env });
  assert.is(stranger.code, 1);
  assert.match(stranger.stderr, 'not_found');
});

test('slugs and domains: add prints the records to create, verify says what to fix (exit 1) until DNS is right (exit 0)', async () => {
  const owner = await newUser(h);
  await setPlan(h.deps, { accountId: owner.account_id, planKey: 'starter' });
  const app = (await h.call('PUT', '/v0/apps', { key: owner.api_key, body: bundle() })).body
    .app_id as string;
  const env = { PLATFORM_API_KEY: owner.api_key };
  const slug = await cli(['slugs', 'add', 'cli-shop', '--app', app], { env });
  assert.is(slug.code, 0, slug.stderr);
  assert.match(slug.stdout, 'the app also serves at http://cli-shop.apps.localhost:8787/');
  assert.match((await cli(['slugs', 'ls', '--app', app], { env })).stdout, /cli-shop\s+active/);

  const add = await cli(['domains', 'add', 'Shop.CLI-one.test', '--app', app], { env });
  assert.is(add.code, 0, add.stderr);
  assert.match(add.stdout, 'added shop.cli-one.test');
  assert.match(add.stdout, /CNAME\s+shop\.cli-one\.test\s+apps\.localhost/);
  const txt = /TXT\s+_platform-challenge\.shop\.cli-one\.test\s+(\S+)/.exec(add.stdout);
  assert.ok(txt, add.stdout);
  assert.match(add.stdout, 'platform domains verify shop.cli-one.test');

  const pending = await cli(['domains', 'verify', 'shop.cli-one.test', '--app', app], { env });
  assert.is(pending.code, 1);
  assert.match(pending.stdout, 'not verified yet');
  assert.match(
    pending.stdout,
    `✗ No TXT record at _platform-challenge.shop.cli-one.test: create TXT _platform-challenge.shop.cli-one.test with the value "${txt![1]}"`,
  );
  dns.set('_platform-challenge.shop.cli-one.test', [{ type: 'TXT', value: txt![1]! }]);
  const ok = await cli(['domains', 'verify', 'shop.cli-one.test', '--app', app], { env });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, '✔ verified shop.cli-one.test serves the app');
  assert.match(
    (await cli(['domains', 'ls', '--app', app], { env })).stdout,
    /shop\.cli-one\.test\s+active/,
  );
  assert.is((await h.call('GET', '/', { host: 'shop.cli-one.test' })).status, 200);
  assert.is((await cli(['domains', 'rm', 'shop.cli-one.test', '--app', app], { env })).code, 0);
  assert.is((await cli(['slugs', 'rm', 'cli-shop', '--app', app], { env })).code, 0);
  assert.is((await h.call('GET', '/', { host: 'shop.cli-one.test' })).status, 410);
  const free = await newUser(h);
  const freeApp = (await h.call('PUT', '/v0/apps', { key: free.api_key, body: bundle() })).body
    .app_id as string;
  const refused = await cli(['domains', 'add', 'x.cli-two.test', '--app', freeApp], {
    env: { PLATFORM_API_KEY: free.api_key },
  });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, 'entitlement_required');
});

test('platform analytics: what visits did, after a flush; the plan clamp; --json; Free gets the upgrade hint', async () => {
  const owner = await newUser(h);
  await setPlan(h.deps, { accountId: owner.account_id, planKey: 'starter' });
  const app = (await h.call('PUT', '/v0/apps', { key: owner.api_key, body: bundle() })).body
    .app_id as string;
  for (let i = 0; i < 3; i++)
    assert.is(
      (
        await h.call('GET', '/', {
          host: `${app}.apps.localhost`,
          headers: { referer: 'https://news.example/a' },
        })
      ).status,
      200,
    );
  assert.is((await h.call('GET', '/app.js', { host: `${app}.apps.localhost` })).status, 200);
  await h.server.runtime.analytics.flush();
  const env = { PLATFORM_API_KEY: owner.api_key };
  const r = await cli(['analytics', '--app', app], { env });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /Requests\s+4 /);
  assert.match(r.stdout, /Status\s+2xx 4\s+3xx 0/);
  assert.match(r.stdout, /\/app\.js\s+1/);
  assert.match(r.stdout, /news\.example\s+3/);
  const month = await cli(['analytics', '--app', app, '--range', '30d'], { env });
  assert.match(month.stdout, 'clamped to 7 days by your plan');
  const j = JSON.parse((await cli(['analytics', '--app', app, '--json'], { env })).stdout);
  assert.is(j.totals.requests, 4);
  assert.is((await cli(['analytics', '--app', app, '--range', '1y'], { env })).code, 1);
  const free = await newUser(h);
  const freeApp = (await h.call('PUT', '/v0/apps', { key: free.api_key, body: bundle() })).body
    .app_id as string;
  const refused = await cli(['analytics', '--app', freeApp], {
    env: { PLATFORM_API_KEY: free.api_key },
  });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, 'entitlement_required');
  assert.match(refused.stderr, 'Starter');
});

test('platform resources: what the live release declares and what each collection and store holds; --json', async () => {
  const owner = await newUser(h);
  const resources = {
    data: {
      collections: {
        notes: { fields: { body: 'string' }, access: { read: 'public', write: 'public' } },
        tags: { fields: { label: 'string' } },
      },
    },
    files: { stores: { photos: { public: true } } },
    jobs: { nightly: { trigger: 'schedule', schedule: 'daily' } },
  };
  const app = (await h.call('PUT', '/v0/apps', { key: owner.api_key, body: bundle({ resources }) }))
    .body.app_id as string;
  const host = `${app}.apps.localhost`;
  for (const body of ['first', 'second'])
    assert.is(
      (
        await h.call('POST', '/_platform/data/notes', {
          host,
          body: { body },
          headers: { origin: `http://${host}` },
        })
      ).status,
      201,
    );
  const env = { PLATFORM_API_KEY: owner.api_key };
  const r = await cli(['resources', '--app', app], { env });
  assert.is(r.code, 0, r.stderr);
  // {"body": "first"} and {"body": "second"}: 17 + 18 bytes as the storage quota counts them
  assert.match(r.stdout, /^Stored\s+35 bytes of data rows and files/);
  assert.match(r.stdout, /^notes\s+2\s+35 bytes\s+public\s+public$/m);
  assert.match(r.stdout, /^tags\s+0\s+0 bytes\s+server_only\s+server_only$/m);
  assert.match(r.stdout, /^photos\s+0\s+0 bytes\s+yes$/m);
  assert.match(r.stdout, /^nightly\s+on schedule: daily$/m);
  const j = JSON.parse((await cli(['resources', '--app', app, '--json'], { env })).stdout);
  assert.equal(j.usage, { 'storage.bytes': 35 });
  assert.equal(
    j.resources.find((x: { resource_name: string }) => x.resource_name === 'notes').usage,
    { rows: 2, bytes: 35 },
  );
});

test.after(async () => {
  await live.close();
  await h.close();
  await dns.close();
  await rm(work, { recursive: true, force: true });
});
test.run();
