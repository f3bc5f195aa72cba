/**
 * `_redirects` and `_headers` in the static root, applied as Workers static assets and Netlify
 * apply them: redirects with their status, splats and placeholders, a 200 rule answering with
 * another file, headers added and removed by pattern; the two files themselves are never served.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);

const REDIRECTS = `# moved pages
/old /new 301
/blog/* /posts/:splat
/users/:id/profile /people/:id 308
/app/* /index.html 200
/away https://example.com/landing 302
/bad-status /x 999
`;
const HEADERS = `/assets/*
  Cache-Control: public, max-age=31536000, immutable
  X-From: headers-file
/*
  X-Frame-Options: SAMEORIGIN
/secret.html
  ! X-Frame-Options
  X-Robots-Tag: noindex
`;

const pub = await h.call('PUT', '/v0/apps', {
  key: u.api_key,
  body: site({
    files: [
      file('public/index.html', '<h1>home</h1>'),
      file('public/new.html', 'new page'),
      file('public/assets/app.js', 'console.log(1)', 'text/javascript'),
      file('public/secret.html', 'secret'),
      file('public/_redirects', REDIRECTS, 'text/plain'),
      file('public/_headers', HEADERS, 'text/plain'),
    ],
  }),
});
assert.is(pub.status, 200, pub.text);
const host = `${pub.body.app_id}.apps.localhost`;
const visit = (p: string) => h.call('GET', p, { host });

test('redirect rules answer with their status and destination, placeholders and splats filled in', async () => {
  const cases: [string, number, string][] = [
    ['/old', 301, '/new'],
    ['/old?x=1', 301, '/new?x=1'],
    ['/blog/2024/hello', 302, '/posts/2024/hello'],
    ['/users/42/profile', 308, '/people/42'],
    ['/away', 302, 'https://example.com/landing'],
  ];
  for (const [p, status, location] of cases) {
    const r = await visit(p);
    assert.is(r.status, status, p);
    assert.is(r.headers.get('location'), location, p);
  }
  const rewritten = await visit('/app/settings/profile');
  assert.is(rewritten.status, 200);
  assert.is(rewritten.text, '<h1>home</h1>', 'a 200 rule answers with its file at the same URL');
  assert.is(
    (await visit('/bad-status')).status,
    404,
    'a rule with a status it cannot have is left out',
  );
});

test('header rules add and remove headers on the files they match', async () => {
  const js = await visit('/assets/app.js');
  assert.is(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.is(js.headers.get('x-from'), 'headers-file');
  assert.is(js.headers.get('x-frame-options'), 'SAMEORIGIN');
  const page = await visit('/new.html');
  assert.is(page.headers.get('x-frame-options'), 'SAMEORIGIN');
  assert.is(page.headers.get('x-from'), null);
  const secret = await visit('/secret.html');
  assert.is(secret.headers.get('x-frame-options'), null, '! removes what an earlier rule added');
  assert.is(secret.headers.get('x-robots-tag'), 'noindex');
  // the second request of a file comes from memory on other apps: here it still gets its rules
  assert.is((await visit('/assets/app.js')).headers.get('x-from'), 'headers-file');
});

test('the two files are configuration, never served', async () => {
  assert.is((await visit('/_redirects')).status, 404);
  assert.is((await visit('/_headers')).status, 404);
});

test.after(() => h.close());
test.run();
