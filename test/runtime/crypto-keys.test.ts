/**
 * Keys app code can no longer reach are not kept: jose imports a CryptoKey for every sign and
 * verify given a raw secret (its documented HS256 use), and once failed every call after ~5,000
 * requests (the instance's key bound was reached by keys nothing held). 50,000 sign-and-verify
 * rounds on one instance; and 15,000 distinct keys made and dropped one after another.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_KEYS } from '../../src/sandbox/subtle.ts';
import { eventsOf, publishServerApp } from '../_lib/apps.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness({ PLATFORM_PLANS_FILE: 'test/fixtures/plans-cpu-as-wall.json' });
const key = (await newUser(h)).api_key;

const SOURCE = `import * as jose from 'jose';
const secret = new TextEncoder().encode('a-shared-secret-of-32-bytes-long!');
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get('n'));
    if (url.pathname === '/jose') {
      let ok = 0;
      for (let i = 0; i < n; i++) {
        const token = await new jose.SignJWT({ i }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
        const { payload } = await jose.jwtVerify(token, secret);
        if (payload.i === i) ok++;
      }
      return Response.json({ ok });
    }
    // distinct keys, each dropped before the next is made
    let made = 0;
    for (let i = 0; i < n; i++) {
      const raw = crypto.getRandomValues(new Uint8Array(32));
      const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      await crypto.subtle.sign('HMAC', k, raw);
      made++;
    }
    return Response.json({ made });
  },
};`;

const app = await publishServerApp(h, key, await bundleModule(SOURCE));

test('jose HS256: 50,000 sign-and-verify rounds on one instance keep working', async () => {
  let total = 0;
  for (let r = 0; r < 50; r++) {
    const res = await h.call('GET', '/jose?n=1000', { host: app.host });
    const why =
      res.status === 200
        ? ''
        : JSON.stringify((await eventsOf(h, key, app.appId, 'runtime.request_error'))[0]?.metadata);
    assert.is(res.status, 200, `request ${r + 1}: ${res.text} ${why}`);
    total += res.body.ok;
  }
  assert.is(total, 50_000);
});

test(`distinct keys made and dropped: past the ${MAX_KEYS.toLocaleString('en')} keys in use at once, every one still works`, async () => {
  // one instance (warm between calls), six calls of 2,000 keys each
  let made = 0;
  for (let r = 0; r < 6; r++) {
    const res = await h.call('GET', '/distinct?n=2000', { host: app.host });
    const why =
      res.status === 200
        ? ''
        : JSON.stringify((await eventsOf(h, key, app.appId, 'runtime.request_error'))[0]?.metadata);
    assert.is(res.status, 200, `call ${r + 1}: ${res.text} ${why}`);
    made += res.body.made;
  }
  assert.ok(made > MAX_KEYS, `${made} keys made`);
});

test.after(() => h.close());
test.run();
