/**
 * Every same-origin redirect the platform makes goes through one function
 * (src/lib/same-origin-path.ts), tested with the tricks that take a browser elsewhere: control
 * characters a URL parser drops, backslashes, dot segments, encoded and full-width dots, other
 * schemes, userinfo. Each is sent where people can send it: a preview link's `to=`, the console's
 * old invites page, an app's directory redirect; and the console's pages use the same function.
 * Each answer is a redirect that a browser, resolving it as Chromium does, keeps on the origin,
 * never a 500.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sameOriginPath } from '../../src/lib/same-origin-path.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h, 'redirects');

/** Raw return paths, as they arrive after percent-decoding of a query parameter. */
const TRICKS = [
  '//attacker.localhost',
  '///attacker.localhost',
  '/\\attacker.localhost',
  '\\\\attacker.localhost',
  '/\t/attacker.localhost',
  '\t//attacker.localhost',
  '/\n/attacker.localhost',
  '/\r\n/attacker.localhost',
  ' //attacker.localhost',
  '/.//attacker.localhost',
  '/..//attacker.localhost',
  '/x/../..//attacker.localhost',
  '/%2e%2e//attacker.localhost',
  'http://attacker.localhost/',
  'https:attacker.localhost',
  'http:/\\attacker.localhost',
  'javascript:alert(1)',
  'data:text/html,hi',
  '//user@attacker.localhost',
  '/\u3002attacker.localhost',
  '//attacker\u3002localhost',
  '//attacker%E3%80%82localhost',
  '/\u0000/attacker.localhost',
  '/\u2028',
  '\u0010//attacker.localhost',
];

/** Where a browser goes when it follows `location` from `origin`. */
const followed = (location: string, origin: string) => new URL(location, origin);

test('the one function: every trick stays on the origin, and what it answers is a valid header value', () => {
  const origin = 'http://app.apps.localhost:8787';
  for (const raw of TRICKS) {
    const to = sameOriginPath(raw);
    assert.is(followed(to, `${origin}/some/page`).origin, origin, JSON.stringify(raw));
    assert.ok(/^[\x21-\x7e]+$/.test(to), `${JSON.stringify(raw)} → ${JSON.stringify(to)}`);
    assert.not.ok(to.startsWith('//'), JSON.stringify(raw));
    new Headers({ location: to }); // a header value a Response can carry
  }
  // what should pass, passes, as the browser would request it
  assert.is(sameOriginPath('/hello?x=1#top'), '/hello?x=1#top');
  assert.is(sameOriginPath('/a/./b/../c'), '/a/c');
  assert.is(sameOriginPath('/caf\u00e9 menu'), '/caf%C3%A9%20menu');
  assert.is(sameOriginPath('/\t/x'), '/', 'a tab dropped leaves //x: refused');
  assert.is(sameOriginPath(null), '/');
  assert.is(sameOriginPath(undefined, '/apps'), '/apps');
  assert.is(sameOriginPath('x'.repeat(5000)), '/');
});

test("a preview link's to= answers 303 on the preview's own origin for every trick", async () => {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'live'),
      file(
        'server.js',
        'export default { fetch() { return new Response("ok"); } };',
        'text/javascript',
      ),
    ],
  });
  const first = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  const appId = first.body.app_id as string;
  const p = await h.call('PUT', `/v0/apps/${appId}?preview=true`, { key: u.api_key, body });
  assert.is(p.status, 200, p.text);
  const entry = new URL(p.body.preview.url);
  const origin = entry.origin;
  for (const raw of [...TRICKS, '/ok/path']) {
    const search = `${entry.search}&to=${encodeURIComponent(raw)}`;
    const r = await h.call('GET', `${entry.pathname}${search}`, {
      host: entry.host.replace(/:\d+$/, ''),
    });
    assert.is(r.status, 303, `${JSON.stringify(raw)}: ${r.text}`);
    const to = r.headers.get('location')!;
    assert.is(
      followed(to, `${origin}/_platform/preview`).origin,
      origin,
      `${JSON.stringify(raw)} → ${to}`,
    );
  }
  const ok = await h.call('GET', `${entry.pathname}${entry.search}&to=%2Fok%2Fpath%3Fq%3D1`, {
    host: entry.host.replace(/:\d+$/, ''),
  });
  assert.is(ok.headers.get('location'), '/ok/path?q=1', 'a real return path is kept');
});

test("an app's directory redirect stays on the app, whatever the request path's slashes", async () => {
  const body = site({
    files: [
      file('public/index.html', 'home'),
      file('public/attacker.localhost/index.html', 'a folder named like a host'),
    ],
  });
  const r = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  assert.is(r.status, 200, r.text);
  const host = `${r.body.app_id}.apps.localhost`;
  const res = await h.call('GET', '/attacker.localhost', { host });
  assert.is(res.status, 301);
  assert.is(res.headers.get('location'), '/attacker.localhost/');
  for (const p of ['//attacker.localhost', '///attacker.localhost', '/.//attacker.localhost']) {
    const odd = await h.call('GET', p, { host });
    const to = odd.headers.get('location');
    if (to) assert.is(followed(to, `http://${host}${p}`).host, host, `${p} → ${to}`);
    else assert.is(odd.status, 404, p);
  }
});

test("the console's old invites page redirects with the console's security headers, and never off it", async () => {
  const r = await h.call('GET', '/apps/app123/invites', { host: h.config.hosts.console });
  assert.is(r.status, 301);
  assert.is(r.headers.get('location'), '/apps/app123/users');
  for (const name of [
    'content-security-policy',
    'x-frame-options',
    'x-content-type-options',
    'referrer-policy',
  ])
    assert.ok(r.headers.get(name), `${name} is set`);
  const odd = await h.call('GET', '/apps/%0d%0a%2F%2Fattacker.localhost/invites', {
    host: h.config.hosts.console,
  });
  assert.is(odd.status, 301, odd.text);
  assert.is(
    followed(odd.headers.get('location')!, 'http://console.localhost').host,
    'console.localhost',
  );
});

test("the console's pages get the same function", async () => {
  const r = await h.call('GET', '/assets/same-origin-path.js', { host: h.config.hosts.console });
  assert.is(r.status, 200);
  const mod = await import(`data:text/javascript,${encodeURIComponent(r.text)}`);
  for (const raw of [...TRICKS, '/hello?x=1#top'])
    assert.is(mod.sameOriginPath(raw), sameOriginPath(raw), JSON.stringify(raw));
  const consoleJs = await h.call('GET', '/assets/console.js', { host: h.config.hosts.console });
  assert.match(consoleJs.text, "import { sameOriginPath } from './same-origin-path.js';");
});

test.after(() => h.close());
test.run();
