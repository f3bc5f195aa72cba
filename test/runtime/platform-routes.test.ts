/**
 * The reserved `/_platform/*` routes as a client meets them: the route table answers each path's
 * own methods, a wrong method gets 405 with `Allow`, an unknown reserved path 404, and every error
 * is the contract's body with the request id.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const resources = {
  auth: { mode: 'app_users', public_signup: true },
  data: {
    collections: {
      notes: { fields: { title: 'string' }, access: { read: 'public', write: 'public' } },
    },
  },
  files: { stores: { pics: { public: true } } },
  webhooks: { hook: { provider: 'none', deliver_to: 'server' } },
};
const pub = await h.call('PUT', '/v0/apps', {
  key: owner.api_key,
  body: site({ resources, files: [file('public/index.html', 'hi')] }),
});
assert.is(pub.status, 200, pub.text);
const host = `${pub.body.app_id}.apps.localhost`;

test('a wrong method gets 405 naming the methods the path takes, in the message and in Allow', async () => {
  const cases: [method: string, path: string, allow: string][] = [
    ['PUT', '/_platform/data/notes', 'GET, POST, HEAD'],
    ['POST', '/_platform/data/notes/row_1', 'GET, PATCH, DELETE, HEAD'],
    ['DELETE', '/_platform/files/pics/fil_1', 'GET, HEAD'],
    ['GET', '/_platform/auth/login', 'POST'],
    ['POST', '/_platform/auth/session', 'GET, HEAD'],
    ['DELETE', '/_platform/auth/verify', 'GET, POST, HEAD'],
    ['GET', '/_platform/webhooks/hook', 'POST'],
  ];
  for (const [method, path, allow] of cases) {
    const r = await h.call(method, path, { host });
    assert.is(r.status, 405, `${method} ${path}: ${r.text}`);
    assert.is(r.body.error.code, 'method_not_allowed', path);
    assert.is(r.headers.get('allow'), allow, `${method} ${path}`);
    assert.ok(r.headers.get('x-request-id'), `${path}: request id`);
  }
});

test('an unknown reserved path is 404, and so are the wrong number of segments', async () => {
  for (const path of [
    '/_platform/nope',
    '/_platform/data',
    '/_platform/data/notes/a/b',
    '/_platform/files/pics',
    '/_platform/auth/nope',
    '/_platform/webhooks/hook/x',
  ]) {
    const r = await h.call('GET', path, { host });
    assert.is(r.status, 404, `${path}: ${r.text}`);
    assert.is(r.body.error.code, 'not_found', path);
  }
});

test('a trailing slash names the same collection or row; HEAD of a list answers its headers', async () => {
  const created = await h.call('POST', '/_platform/data/notes/', { host, body: { title: 'one' } });
  assert.is(created.status, 201, created.text);
  assert.is(
    (await h.call('GET', `/_platform/data/notes/${created.body.id}/`, { host })).body.title,
    'one',
  );
  const head = await h.call('HEAD', '/_platform/data/notes', { host });
  assert.is(head.status, 200);
  assert.is(head.headers.get('cache-control'), 'no-store');
});

test('bodies of a fixed shape are validated field by field; errors are never cached', async () => {
  const r = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'not an address', password: 'short' },
  });
  assert.is(r.status, 400);
  assert.is(r.body.error.code, 'invalid_request');
  assert.equal(Object.keys(r.body.error.details.fields).sort(), ['email', 'password']);
  assert.is(r.headers.get('cache-control'), 'no-store');
  const bad = await h.call('POST', '/_platform/auth/verify', { host, body: { token: 42 } });
  assert.is(
    bad.body.error.code,
    'invalid_verification',
    'a token that is not a string is just not a valid token',
  );
});

test.after(() => h.close());
test.run();
