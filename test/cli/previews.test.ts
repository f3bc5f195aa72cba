/**
 * `platform publish --preview` prints a link to the release's own origin and leaves the live one;
 * `platform releases` marks it; `platform previews revoke` ends every link and `platform previews
 * link` makes a new one; `platform promote` makes it live.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, writeSite } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-previews-${process.pid}`);
await mkdir(work, { recursive: true });
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const MANIFEST = {
  app: { name: 'Previewed' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
};
const version = (v: string) =>
  writeSite(work, 'app', MANIFEST, {
    'public/index.html': 'static',
    'server.js': `export default { fetch() { return new Response('${v}') } };`,
  });

test('a folder never published cannot be previewed: the CLI says to publish it first', async () => {
  const dir = await writeSite(work, 'fresh', MANIFEST, {
    'public/index.html': 'static',
    'server.js': 'export default { fetch() { return new Response("x") } };',
  });
  const r = await cli(['publish', dir, '--preview']);
  assert.is(r.code, 1);
  assert.match(r.stderr, 'not linked to one yet');
  assert.match(r.stderr, 'without --preview');
});

test('publish --preview, then promote', async () => {
  const first = await cli(['publish', await version('one'), '--json']);
  assert.is(first.code, 0, first.stderr);
  const appId = JSON.parse(first.stdout).app_id as string;
  const dir = path.join(work, 'app');
  // the folder stays linked to its app (.platform/app.json): only the code changes
  await writeFile(
    path.join(dir, 'server.js'),
    "export default { fetch() { return new Response('two') } };",
  );
  const p = await cli(['publish', dir, '--preview'], { cwd: dir });
  assert.is(p.code, 0, p.stderr + p.stdout);
  assert.match(p.stdout, '✔ preview');
  const url = /(http:\/\/\S+\/_platform\/preview\?grant=\S+)/.exec(p.stdout)?.[1];
  assert.ok(url, p.stdout);
  const releaseId = /platform promote (rel_\w+)/.exec(p.stdout)?.[1];
  assert.ok(releaseId, p.stdout);
  assert.is((await h.call('GET', '/run', { host: `${appId}.apps.localhost` })).text, 'one');

  // the link is the way in: its grant becomes the cookie that opens the preview
  const entry = new URL(url!);
  const host = entry.hostname;
  const enter = await h.call('GET', entry.pathname + entry.search, { host });
  const cookie = enter.headers.get('set-cookie')!.split(';')[0]!;
  assert.is((await h.call('GET', '/run', { host, headers: { cookie } })).text, 'two');

  // a link that reached the wrong people: end them all, then make a new one
  const revoked = await cli(['previews', 'revoke'], { cwd: dir });
  assert.is(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, '✔ preview links ended');
  assert.is((await h.call('GET', '/run', { host, headers: { cookie } })).status, 401);
  const again = await cli(['previews', 'link', releaseId!, '--json'], { cwd: dir });
  assert.is(again.code, 0, again.stderr);
  const fresh = new URL(JSON.parse(again.stdout).url as string);
  assert.is(fresh.hostname, host);
  const reenter = await h.call('GET', fresh.pathname + fresh.search, { host });
  assert.is(reenter.status, 303);
  const cookie2 = reenter.headers.get('set-cookie')!.split(';')[0]!;
  assert.is((await h.call('GET', '/run', { host, headers: { cookie: cookie2 } })).text, 'two');

  const listed = await cli(['releases'], { cwd: dir });
  assert.match(listed.stdout, new RegExp(`preview\\s+${releaseId}`));

  const promoted = await cli(['promote', releaseId!], { cwd: dir });
  assert.is(promoted.code, 0, promoted.stderr);
  assert.match(promoted.stdout, `✔ live ${releaseId}`);
  assert.is((await h.call('GET', '/run', { host: `${appId}.apps.localhost` })).text, 'two');
});

test.after(async () => {
  await live.close();
  await h.close();
});
test.run();
