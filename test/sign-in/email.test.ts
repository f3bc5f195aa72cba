/**
 * E-mail link sign-in as a person meets it: real HTTP, real Postgres, mail through a real SMTP
 * server on loopback, time driven by the clock instead of sleeps.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clock } from '../../src/lib/clock.ts';
import {
  createHarness,
  listen,
  newUser,
  uniqueEmail,
  wireRequest,
  type Called,
} from '../_lib/harness.ts';
import { linkToken, startSmtp, startWorker } from '../_lib/mail.ts';

const smtp = await startSmtp();
const h = await createHarness({ SMTP_URL: smtp.url, PLATFORM_MAIL_FROM: 'platform@platform.test' });
const worker = await startWorker(h);
const CONSOLE = h.config.hosts.console;
const ORIGIN = 'http://console.localhost:8787';
const realNow = clock.now;
let client = 0;

type Opts = {
  cookie?: string;
  csrf?: string;
  body?: unknown;
  headers?: Record<string, string>;
  key?: string;
  host?: string;
  client?: string;
};
/** A request to the console host as its own page's script sends it. */
function onConsole(method: string, path: string, o: Opts = {}): Promise<Called> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.cookie) headers.cookie = o.cookie;
  if (o.csrf) headers['x-platform-csrf'] = o.csrf;
  return h.call(method, path, {
    host: o.host ?? CONSOLE,
    body: o.body,
    headers,
    key: o.key,
    client: o.client ?? `127.0.0.${(client++ % 250) + 1}`,
  });
}
const setCookies = (r: Called) => r.headers.getSetCookie();
const cookiePair = (r: Called, name: string) =>
  setCookies(r)
    .find((c) => c.startsWith(`${name}=`))!
    .split(';')[0]!;

/** Request a link for `email` and return the token the message carries. */
async function linkFor(email: string): Promise<{ token: string; text: string }> {
  const r = await onConsole('POST', '/v0/auth/email/request', { body: { email } });
  assert.is(r.status, 202, r.text);
  assert.equal(r.body, { status: 'sent' });
  const mail = await smtp.next(email);
  return { token: linkToken(mail.text), text: mail.text };
}

/** A signed-in browser: new user through the whole sign-up. */
async function signUp(
  username: string,
): Promise<{ email: string; cookie: string; csrf: string; body: any }> {
  const email = uniqueEmail(username);
  const { token } = await linkFor(email);
  const c = await onConsole('POST', '/v0/auth/email/confirm', { body: { token } });
  const pending = cookiePair(c, '__Host-platform_pending_signup');
  const s = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username },
  });
  assert.is(s.status, 201, s.text);
  return {
    email,
    cookie: cookiePair(s, '__Host-platform_session'),
    csrf: s.body.csrf_token,
    body: s.body,
  };
}

test('a new address: link by e-mail, a GET of the confirm page consumes nothing, confirm, sign up, signed in', async () => {
  const email = uniqueEmail('newcomer');
  const { token, text } = await linkFor(email);
  assert.match(text, 'Subject: Finish signing up');
  assert.match(text, `http://console.localhost:8787/auth/confirm#token=${token}`);
  assert.match(text, 'within 15 minutes');

  // a mail scanner or link preview fetches the page: it renders and consumes nothing
  const page = await onConsole('GET', '/auth/confirm');
  assert.is(page.status, 200);
  assert.match(page.text, 'Sign in</button>');
  assert.not.match(page.text, token);
  assert.match(page.headers.get('content-security-policy')!, "script-src 'self'");

  const c = await onConsole('POST', '/v0/auth/email/confirm', {
    body: { token },
    headers: { origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
  });
  assert.is(c.status, 200, c.text);
  assert.equal(c.body, { status: 'signup_required', email });
  const pendingCookie = setCookies(c).find((x) => x.startsWith('__Host-platform_pending_signup='))!;
  assert.match(pendingCookie, /; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=1800$/);
  assert.not.match(pendingCookie, /Domain=/i);
  const pending = pendingCookie.split(';')[0]!;

  const bad = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username: 'No Spaces' },
  });
  assert.is(bad.status, 400);
  assert.ok(bad.body.error.details.fields.username);

  // an account name is mailed in invitations: one line of printable text, nothing that adds a header
  for (const account_name of [
    'Acme\r\nBcc: victim@example.com',
    'Acme\nLine two',
    'Acme\u2028Co',
    'Acme\u0007',
  ]) {
    const r = await onConsole('POST', '/v0/auth/signup/complete', {
      cookie: pending,
      body: { username: 'newcomer-1', account_name },
    });
    assert.is(r.status, 400, JSON.stringify(account_name));
    assert.match(JSON.stringify(r.body.error), 'one line of printable text', r.text);
  }

  const taken = await signUp('taken-name');
  const clash = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username: 'taken-name' },
  });
  assert.is(clash.status, 409);
  assert.is(clash.body.error.code, 'username_taken');
  assert.ok(taken.body.user.id);

  const done = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username: 'newcomer-1', account_name: 'Newcomer Ltd' },
  });
  assert.is(done.status, 201, done.text);
  assert.is(done.body.status, 'signed_in');
  assert.equal(
    { email: done.body.user.email, username: done.body.user.username },
    { email, username: 'newcomer-1' },
  );
  const session = setCookies(done).find((x) => x.startsWith('__Host-platform_session='))!;
  assert.match(
    session,
    /^__Host-platform_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000$/,
  );
  assert.ok(
    setCookies(done).some(
      (x) => x.startsWith('__Host-platform_pending_signup=;') && x.includes('Max-Age=0'),
    ),
    'the pending cookie is cleared',
  );
  const cookie = session.split(';')[0]!;

  const me = await onConsole('GET', '/v0/platform/session', { cookie });
  assert.is(me.status, 200);
  assert.is(me.body.user.email, email);
  assert.is(me.body.csrf_token, done.body.csrf_token);
  assert.is(me.body.accounts.length, 1);
  assert.equal(
    { name: me.body.accounts[0].name, role: me.body.accounts[0].role },
    { name: 'Newcomer Ltd', role: 'owner' },
  );
  assert.is(me.body.default_account_id, done.body.default_account_id);
  assert.ok(new Date(me.body.expires_at) > new Date(), 'expires_at lies ahead');

  // single use, both of them
  const again = await onConsole('POST', '/v0/auth/email/confirm', { body: { token } });
  assert.is(again.status, 400);
  assert.is(again.body.error.code, 'invalid_email_auth_token');
  const replay = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username: 'newcomer-2' },
  });
  assert.is(replay.status, 400);
  assert.is(replay.body.error.code, 'invalid_pending_signup');
});

test('an existing user signs in; every sign-in is a new session; the API host never takes the cookie', async () => {
  const user = await signUp('returning');
  const { token, text } = await linkFor(user.email);
  assert.match(text, 'Subject: Your sign-in link');
  const c = await onConsole('POST', '/v0/auth/email/confirm', { body: { token } });
  assert.is(c.status, 200);
  assert.is(c.body.status, 'signed_in');
  assert.is(c.body.user.username, 'returning');
  const second = cookiePair(c, '__Host-platform_session');
  assert.is.not(second, user.cookie, 'a new session id on every sign-in');
  assert.is.not(c.body.csrf_token, user.csrf);
  for (const cookie of [user.cookie, second])
    assert.is((await onConsole('GET', '/v0/accounts', { cookie })).status, 200);
  const api = await h.call('GET', '/v0/accounts', { headers: { cookie: second } });
  assert.is(api.status, 401, 'the API host ignores the session cookie');
  assert.is(
    (await h.call('GET', '/v0/platform/session', { headers: { cookie: second } })).status,
    401,
  );
  const onApi = await h.call('POST', '/v0/auth/email/confirm', { body: { token: 'x'.repeat(43) } });
  assert.is(onApi.status, 404, 'links are confirmed on the console host');
});

test('bad tokens and bad cookies: 400 with the contract codes', async () => {
  for (const token of ['', 'short', 'x'.repeat(43), '!'.repeat(43)]) {
    const r = await onConsole('POST', '/v0/auth/email/confirm', { body: { token } });
    assert.is(r.status, 400, token);
    assert.is(r.body.error.code, 'invalid_email_auth_token');
  }
  const missing = await onConsole('POST', '/v0/auth/signup/complete', {
    body: { username: 'nobody' },
  });
  assert.is(missing.body.error.code, 'invalid_pending_signup');
  const forged = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: `__Host-platform_pending_signup=${'a'.repeat(43)}`,
    body: { username: 'nobody' },
  });
  assert.is(forged.body.error.code, 'invalid_pending_signup');
  const notEmail = await onConsole('POST', '/v0/auth/email/request', {
    body: { email: 'not-an-address' },
  });
  assert.is(notEmail.status, 400);
  assert.is(notEmail.body.error.code, 'invalid_request');
});

test('the address got a user meanwhile: 409 email_already_registered', async () => {
  const email = uniqueEmail('race');
  const { token } = await linkFor(email);
  const c = await onConsole('POST', '/v0/auth/email/confirm', { body: { token } });
  const pending = cookiePair(c, '__Host-platform_pending_signup');
  const other = await linkFor(email);
  const c2 = await onConsole('POST', '/v0/auth/email/confirm', { body: { token: other.token } });
  assert.is(
    (
      await onConsole('POST', '/v0/auth/signup/complete', {
        cookie: cookiePair(c2, '__Host-platform_pending_signup'),
        body: { username: 'race-winner' },
      })
    ).status,
    201,
  );
  const late = await onConsole('POST', '/v0/auth/signup/complete', {
    cookie: pending,
    body: { username: 'race-loser' },
  });
  assert.is(late.status, 409);
  assert.is(late.body.error.code, 'email_already_registered');
});

test('links expire after 15 minutes, pending sign-ups after 30; asking again keeps an earlier link valid', async () => {
  const user = await signUp('timely');
  const first = await linkFor(user.email);
  const second = await linkFor(user.email);
  try {
    clock.now = () => new Date(realNow().getTime() + 14 * 60_000);
    assert.is(
      (await onConsole('POST', '/v0/auth/email/confirm', { body: { token: first.token } })).status,
      200,
      'the earlier link still works',
    );
    clock.now = () => new Date(realNow().getTime() + 16 * 60_000);
    const late = await onConsole('POST', '/v0/auth/email/confirm', {
      body: { token: second.token },
    });
    assert.is(late.status, 400);
    assert.is(late.body.error.code, 'invalid_email_auth_token');
  } finally {
    clock.now = realNow;
  }
  const fresh = await linkFor(uniqueEmail('slow'));
  const c = await onConsole('POST', '/v0/auth/email/confirm', { body: { token: fresh.token } });
  try {
    clock.now = () => new Date(realNow().getTime() + 31 * 60_000);
    const r = await onConsole('POST', '/v0/auth/signup/complete', {
      cookie: cookiePair(c, '__Host-platform_pending_signup'),
      body: { username: 'too-slow' },
    });
    assert.is(r.body.error.code, 'invalid_pending_signup');
  } finally {
    clock.now = realNow;
  }
});

test('sessions end after 7 idle days or 30 days in all', async () => {
  const idle = await signUp('idler');
  const busy = await signUp('busy-bee');
  try {
    clock.now = () => new Date(realNow().getTime() + 6 * 86_400_000);
    assert.is(
      (await onConsole('GET', '/v0/accounts', { cookie: busy.cookie })).status,
      200,
      'used on day 6',
    );
    clock.now = () => new Date(realNow().getTime() + 8 * 86_400_000);
    assert.is(
      (await onConsole('GET', '/v0/accounts', { cookie: idle.cookie })).status,
      401,
      'idle 8 days',
    );
    for (const day of [12, 18, 24, 29]) {
      clock.now = () => new Date(realNow().getTime() + day * 86_400_000);
      assert.is(
        (await onConsole('GET', '/v0/accounts', { cookie: busy.cookie })).status,
        200,
        `used on day ${day}`,
      );
    }
    clock.now = () => new Date(realNow().getTime() + 31 * 86_400_000);
    assert.is(
      (await onConsole('GET', '/v0/accounts', { cookie: busy.cookie })).status,
      401,
      'past 30 days even when used',
    );
  } finally {
    clock.now = realNow;
  }
});

test('cookie mutations need the CSRF header and a same-site request; keys are managed from a session', async () => {
  const user = await signUp('careful');
  const create = (o: Opts) =>
    onConsole('POST', '/v0/auth/api-keys', {
      cookie: user.cookie,
      body: { name: 'from the console' },
      ...o,
    });
  for (const [label, o] of [
    ['no header', {}],
    ['wrong header', { csrf: 'x'.repeat(43) }],
    ['another session’s token', { csrf: (await signUp('someone-else')).csrf }],
    ['cross-site Origin', { csrf: user.csrf, headers: { origin: 'http://evil.localhost' } }],
    [
      'an app origin',
      { csrf: user.csrf, headers: { origin: 'http://abcdefabcdefabcd.apps.localhost:8787' } },
    ],
    ['cross-site fetch', { csrf: user.csrf, headers: { 'sec-fetch-site': 'cross-site' } }],
  ] as const) {
    const r = await create(o as Opts);
    assert.is(r.status, 403, label);
    assert.is(r.body.error.code, 'csrf_rejected', label);
  }
  assert.is(
    (await h.call('GET', '/v0/auth/api-keys', { host: CONSOLE, headers: { cookie: user.cookie } }))
      .status,
    200,
    'reading needs no CSRF header',
  );
  const made = await create({
    csrf: user.csrf,
    headers: { origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
  });
  assert.is(made.status, 201, made.text);
  assert.match(made.body.api_key, /^ap_/);
  const renamed = await onConsole('PATCH', `/v0/auth/api-keys/${made.body.id}`, {
    cookie: user.cookie,
    csrf: user.csrf,
    body: { name: 'renamed' },
  });
  assert.is(renamed.body.name, 'renamed');
  // the key works on its own, on the API host
  assert.is((await h.call('GET', '/v0/accounts', { key: made.body.api_key })).status, 200);
  // a bearer key wins over the cookie when both are sent
  const other = await newUser(h);
  const both = await onConsole('GET', '/v0/auth/api-keys', {
    cookie: user.cookie,
    key: other.api_key,
  });
  assert.ok(
    both.body.api_keys.every((k: { id: string }) => k.id !== made.body.id),
    'answered as the key’s user',
  );
  const revoked = await onConsole('DELETE', `/v0/auth/api-keys/${made.body.id}`, {
    cookie: user.cookie,
    csrf: user.csrf,
  });
  assert.is(revoked.body.revoked, true);
  assert.is((await h.call('GET', '/v0/accounts', { key: made.body.api_key })).status, 401);
});

test('signing out ends this session only: other sessions and API keys keep working', async () => {
  const user = await signUp('leaver');
  const key = await onConsole('POST', '/v0/auth/api-keys', {
    cookie: user.cookie,
    csrf: user.csrf,
    body: { name: 'laptop' },
  });
  const { token } = await linkFor(user.email);
  const other = cookiePair(
    await onConsole('POST', '/v0/auth/email/confirm', { body: { token } }),
    '__Host-platform_session',
  );
  assert.is(
    (await onConsole('DELETE', '/v0/platform/session', { cookie: user.cookie })).body.error.code,
    'csrf_rejected',
  );
  const out = await onConsole('DELETE', '/v0/platform/session', {
    cookie: user.cookie,
    csrf: user.csrf,
  });
  assert.is(out.status, 200);
  assert.equal(out.body, { status: 'signed_out' });
  assert.match(
    setCookies(out)[0]!,
    /^__Host-platform_session=; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=0$/,
  );
  assert.is((await onConsole('GET', '/v0/platform/session', { cookie: user.cookie })).status, 401);
  assert.is((await onConsole('GET', '/v0/platform/session', { cookie: other })).status, 200);
  assert.is((await h.call('GET', '/v0/accounts', { key: key.body.api_key })).status, 200);
  // a key cannot read or end a console session
  assert.is(
    (await onConsole('GET', '/v0/platform/session', { key: key.body.api_key })).status,
    401,
  );
});

test('too many links for one address, or from one client: 429 abuse_throttled with Retry-After', async () => {
  const email = uniqueEmail('spammed');
  const statuses: number[] = [];
  let last: Called | undefined;
  for (let i = 0; i < 7; i++) {
    last = await onConsole('POST', '/v0/auth/email/request', { body: { email } });
    statuses.push(last.status);
  }
  assert.equal(statuses, [202, 202, 202, 202, 202, 429, 429]);
  assert.is(last!.body.error.code, 'abuse_throttled');
  assert.ok(Number(last!.headers.get('retry-after')) > 0);
  const fromOne: number[] = [];
  for (let i = 0; i < 32; i++)
    fromOne.push(
      (
        await onConsole('POST', '/v0/auth/email/request', {
          body: { email: uniqueEmail('many') },
          client: '127.9.9.9',
        })
      ).status,
    );
  assert.is(fromOne.filter((s) => s === 202).length, 30);
  assert.is(fromOne[31], 429);
  // each accepted request sent its link (the refused two have none to wait for)
  for (let i = 0; i < 5; i++) linkToken((await smtp.next(email)).text);
});

test('two server instances on one database share sessions and limits', async () => {
  const user = await signUp('everywhere');
  const b = await createHarness({ SMTP_URL: smtp.url });
  try {
    const seen = await b.call('GET', '/v0/platform/session', {
      host: CONSOLE,
      headers: { cookie: user.cookie },
    });
    assert.is(seen.status, 200);
    assert.is(seen.body.user.email, user.email);
    // a limit counted on both: 3 requests on A and 3 on B for one address; the sixth is refused
    const email = uniqueEmail('split');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const target = i % 2 ? b : h;
      statuses.push(
        (
          await target.call('POST', '/v0/auth/email/request', {
            host: CONSOLE,
            body: { email },
            client: `127.1.1.${i + 1}`,
          })
        ).status,
      );
    }
    assert.equal(statuses, [202, 202, 202, 202, 202, 429]);
    // signing out on B ends the session on A too
    await b.call('DELETE', '/v0/platform/session', {
      host: CONSOLE,
      headers: { cookie: user.cookie, 'x-platform-csrf': user.csrf },
    });
    assert.is(
      (await onConsole('GET', '/v0/platform/session', { cookie: user.cookie })).status,
      401,
    );
  } finally {
    await b.close();
  }
});

test('over real HTTP, with no mail server: the message lands in the development outbox, its link not', async () => {
  await worker.stop(); // one job queue per database: the SMTP worker must not take this message
  const dev = await createHarness();
  const runner = await startWorker(dev);
  const live = await listen(dev.server);
  try {
    const email = uniqueEmail('outbox');
    const r = await fetch(`${live.url}/v0/auth/email/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    assert.is(r.status, 202);
    let row;
    for (let i = 0; i < 100 && !row; i++) {
      row = await dev.deps.db
        .selectFrom('dev_outbox')
        .selectAll()
        .where('to_address', '=', email)
        .executeTakeFirst();
      if (!row) await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(row, 'the outbox has the message');
    // the link is printed once in the terminal (backup-restore.test.ts follows it), never stored
    assert.match(row!.body, 'Open this link within 15 minutes');
    assert.match(row!.body, '(the link: printed once in the terminal, not stored)');
    assert.not.match(row!.body, /token=[A-Za-z0-9_-]{43}/);
    const signIn = await wireRequest(live.port, `${CONSOLE}:${live.port}`, '/sign-in');
    assert.is(signIn.status, 200);
    assert.match(signIn.body, 'printed in the terminal where <code>npm start</code> runs');
  } finally {
    await live.close();
    await runner.stop();
    await dev.close();
  }
});

test.after(async () => {
  await worker.stop().catch(() => {}); // already stopped by the last test
  await h.close();
  await smtp.close();
});
test.run();
