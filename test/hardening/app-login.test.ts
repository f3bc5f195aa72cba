/** App-user login: a wrong password looks the same whatever its length; only new passwords have a minimum. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();

test('a short or empty wrong password is the uniform 401; sign-up still needs 8 characters', async () => {
  const u = await newUser(h);
  const app = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({ resources: { auth: { mode: 'app_users', public_signup: true } } }),
  });
  const host = `${app.body.app_id}.apps.localhost`;
  assert.is(
    (
      await h.call('POST', '/_platform/auth/signup', {
        host,
        body: { email: 'ida@example.com', password: 'correct horse' },
      })
    ).status,
    201,
  );
  const long = await h.call('POST', '/_platform/auth/login', {
    host,
    body: { email: 'ida@example.com', password: 'a wrong but long password' },
  });
  assert.is(long.status, 401);
  for (const password of ['short', '']) {
    const r = await h.call('POST', '/_platform/auth/login', {
      host,
      body: { email: 'ida@example.com', password },
    });
    assert.is(r.status, 401, `"${password}": ${r.text}`);
    assert.equal(r.body, long.body, 'the same answer as any wrong password');
  }
  assert.is(
    (
      await h.call('POST', '/_platform/auth/login', {
        host,
        body: { email: 'ida@example.com', password: 'x'.repeat(257) },
      })
    ).status,
    400,
    'the upper bound stays',
  );
  const weak = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'jo@example.com', password: 'short' },
  });
  assert.is(weak.status, 400);
  assert.equal(weak.body.error.details.fields.password, ['must be 8 to 256 characters']);
  assert.is(
    (
      await h.call('POST', '/_platform/auth/login', {
        host,
        body: { email: 'ida@example.com', password: 'correct horse' },
      })
    ).status,
    200,
  );
});

test.after(() => h.close());
test.run();
