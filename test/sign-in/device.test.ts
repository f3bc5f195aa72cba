/** Browser-approved device login (RFC 8628) through the API, as the CLI and the console page drive it. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clock } from '../../src/lib/clock.ts';
import { createSession } from '../../src/sign-in/sessions.ts';
import { createHarness, newMember, newUser, type Called } from '../_lib/harness.ts';

const h = await createHarness();
const CONSOLE = h.config.hosts.console;
const realNow = clock.now;
let client = 0;

/** A console session for a fresh user (the sign-in flow itself is tested in email.test.ts). */
async function browser(userId?: string) {
  const id = userId ?? (await newUser(h)).user_id;
  const { token, session } = await createSession(h.deps.db, id);
  const cookie = `__Host-platform_session=${token}`;
  const call = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    h.call(method, path, {
      host: CONSOLE,
      body,
      headers: { cookie, 'x-platform-csrf': session.csrfToken, ...extra },
      client: `127.0.2.${(client++ % 250) + 1}`,
    });
  return { userId: id, call };
}
const cli = (path: string, body: unknown, address = '127.0.3.1'): Promise<Called> =>
  h.call('POST', `/v0/auth/device${path}`, { body, client: address });
const at = (seconds: number) => (clock.now = () => new Date(realNow().getTime() + seconds * 1000));

test('start → approve in the browser → the poller gets the key exactly once, then consumed', async () => {
  const start = await cli('/start', { client_name: 'platform CLI on laptop' });
  assert.is(start.status, 200, start.text);
  assert.match(start.body.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  assert.match(start.body.device_code, /^[A-Za-z0-9_-]{43}$/);
  assert.is(start.body.verification_uri, 'http://console.localhost:8787/device');
  assert.is(
    start.body.verification_uri_complete,
    `http://console.localhost:8787/device?user_code=${start.body.user_code}`,
  );
  assert.is(start.body.expires_in, 600);
  assert.is(start.body.interval, 5);
  try {
    at(0);
    assert.equal((await cli('/poll', { device_code: start.body.device_code })).body, {
      status: 'authorization_pending',
      interval: 5,
    });

    const b = await browser();
    // the code can be typed in lower case, without the dash
    const typed = start.body.user_code.toLowerCase().replace('-', '');
    const seen = await b.call('GET', `/v0/auth/device/approval?user_code=${typed}`);
    assert.is(seen.status, 200, seen.text);
    assert.equal(
      {
        user_code: seen.body.user_code,
        client_name: seen.body.client_name,
        status: seen.body.status,
      },
      { user_code: start.body.user_code, client_name: 'platform CLI on laptop', status: 'pending' },
    );
    assert.is(seen.body.client_address, '127.0.3.1', 'the approver sees where it started');
    const ok = await b.call('POST', '/v0/auth/device/approve', { user_code: typed });
    assert.is(ok.status, 200, ok.text);
    assert.equal(ok.body, { user_code: start.body.user_code, status: 'approved' });
    assert.not.ok(JSON.stringify(ok.body).includes('ap_'), 'the browser never sees the key');

    at(6);
    const got = await cli('/poll', { device_code: start.body.device_code });
    assert.is(got.body.status, 'approved');
    assert.match(got.body.api_key, /^ap_[A-Za-z0-9_-]{43}$/);
    assert.is(got.body.key_prefix, got.body.api_key.slice(0, 11));
    const me = await h.call('GET', '/v0/accounts', { key: got.body.api_key });
    assert.is(me.status, 200);
    assert.is(got.body.account_id, me.body.default_account_id);
    const keys = await h.call('GET', '/v0/auth/api-keys', { key: got.body.api_key });
    assert.ok(
      keys.body.api_keys.some(
        (k: { id: string; name: string }) =>
          k.id === got.body.api_key_id && k.name === 'platform CLI on laptop',
      ),
      'named after the client',
    );

    at(12);
    assert.equal((await cli('/poll', { device_code: start.body.device_code })).body, {
      status: 'consumed',
    });
    const twice = await b.call('POST', '/v0/auth/device/approve', { user_code: typed });
    assert.is(twice.status, 400);
    assert.is(twice.body.error.code, 'invalid_device_authorization');
  } finally {
    clock.now = realNow;
  }
});

test('polling faster than the interval: slow_down, and the longer interval is kept', async () => {
  const start = await cli('/start', {});
  try {
    at(0);
    assert.equal((await cli('/poll', { device_code: start.body.device_code })).body, {
      status: 'authorization_pending',
      interval: 5,
    });
    at(2);
    assert.equal((await cli('/poll', { device_code: start.body.device_code })).body, {
      status: 'slow_down',
      interval: 10,
    });
    at(9);
    assert.equal(
      (await cli('/poll', { device_code: start.body.device_code })).body,
      { status: 'slow_down', interval: 15 },
      '7 s is too soon for 10',
    );
    at(25);
    assert.equal((await cli('/poll', { device_code: start.body.device_code })).body, {
      status: 'authorization_pending',
      interval: 15,
    });
  } finally {
    clock.now = realNow;
  }
});

test('denied, expired, unknown', async () => {
  const b = await browser();
  const denied = await cli('/start', { client_name: 'suspicious' });
  const d = await b.call('POST', '/v0/auth/device/deny', { user_code: denied.body.user_code });
  assert.equal(d.body, { user_code: denied.body.user_code, status: 'denied' });
  assert.equal((await cli('/poll', { device_code: denied.body.device_code })).body, {
    status: 'denied',
  });
  assert.is(
    (await b.call('GET', `/v0/auth/device/approval?user_code=${denied.body.user_code}`)).body
      .status,
    'denied',
  );

  const late = await cli('/start', {});
  try {
    at(601);
    assert.equal((await cli('/poll', { device_code: late.body.device_code })).body, {
      status: 'expired',
    });
    const r = await b.call('POST', '/v0/auth/device/approve', { user_code: late.body.user_code });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, 'device_authorization_expired');
    assert.is(
      (await b.call('GET', `/v0/auth/device/approval?user_code=${late.body.user_code}`)).body
        .status,
      'expired',
    );
  } finally {
    clock.now = realNow;
  }
  for (const device_code of ['nope', 'x'.repeat(43)]) {
    const r = await cli('/poll', { device_code });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, 'invalid_device_authorization');
  }
  const unknown = await b.call('POST', '/v0/auth/device/approve', { user_code: 'BBBB-BBBB' });
  assert.is(unknown.body.error.code, 'invalid_device_authorization');
});

test('approval needs a console session with CSRF, and the account chosen must be yours', async () => {
  const start = await cli('/start', {});
  const owner = await newUser(h);
  const asKey = await h.call('POST', '/v0/auth/device/approve', {
    key: owner.api_key,
    body: { user_code: start.body.user_code },
  });
  assert.is(asKey.status, 401, 'an API key cannot approve');
  const b = await browser(owner.user_id);
  const noCsrf = await b.call(
    'POST',
    '/v0/auth/device/approve',
    { user_code: start.body.user_code },
    { 'x-platform-csrf': '' },
  );
  assert.is(noCsrf.body.error.code, 'csrf_rejected');
  const stranger = await newUser(h);
  const notMine = await b.call('POST', '/v0/auth/device/approve', {
    user_code: start.body.user_code,
    account_id: stranger.account_id,
  });
  assert.is(notMine.status, 404);
  // a team account the person belongs to can be chosen
  const team = await newUser(h);
  await newMember(h, team.account_id, 'developer').then(async (m) => {
    const member = await browser(m.user_id);
    const ok = await member.call('POST', '/v0/auth/device/approve', {
      user_code: start.body.user_code,
      account_id: team.account_id,
    });
    assert.is(ok.status, 200, ok.text);
  });
  try {
    at(10);
    const got = await cli('/poll', { device_code: start.body.device_code });
    assert.is(got.body.account_id, team.account_id);
  } finally {
    clock.now = realNow;
  }
});

test('a user at the live-key bound cannot approve a device login: the approver reads why', async () => {
  const u = await newUser(h);
  for (let i = 1; i < 100; i++)
    assert.is(
      (await h.call('POST', '/v0/auth/api-keys', { key: u.api_key, body: { name: `k${i}` } }))
        .status,
      201,
    );
  const start = await cli('/start', { client_name: 'platform CLI on box' }, '127.0.3.9');
  const b = await browser(u.user_id);
  const r = await b.call('POST', '/v0/auth/device/approve', { user_code: start.body.user_code });
  assert.is(r.status, 409);
  assert.equal(r.body.error.details, { live_keys: 100, limit: 100 });
  const seen = await b.call('GET', `/v0/auth/device/approval?user_code=${start.body.user_code}`);
  assert.is(seen.body.status, 'pending', 'nothing was decided');
});

test('guessing user codes: refused with 429 once over the limit, even for a real code', async () => {
  const b = await browser();
  const real = await cli('/start', {});
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++)
    statuses.push(
      (await b.call('GET', `/v0/auth/device/approval?user_code=BBBB-BB${'BCDFGHJKLMN'[i]}B`))
        .status,
    );
  assert.equal(statuses.slice(0, 10), Array(10).fill(400));
  assert.is(statuses[10], 429);
  const blocked = await b.call('GET', `/v0/auth/device/approval?user_code=${real.body.user_code}`);
  assert.is(blocked.status, 429);
  assert.is(blocked.body.error.code, 'abuse_throttled');
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  // another person is not blocked by it
  assert.is(
    (
      await (
        await browser()
      ).call('GET', `/v0/auth/device/approval?user_code=${real.body.user_code}`)
    ).status,
    200,
  );
});

test.after(() => h.close());
test.run();
