/**
 * The plan a new account starts on, and what a limit's message says, on a server that sells plans
 * (Stripe configured) and on one that sells nothing (a private install): there the owner of the
 * server is not on Free, and a message names the operator's command instead of an upgrade.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, uniqueEmail, type Harness } from '../_lib/harness.ts';
import { linkToken, startSmtp, startWorker } from '../_lib/mail.ts';

const smtp = await startSmtp();
const STRIPE = {
  STRIPE_SECRET_KEY: 'sk_test_selfhosted',
  STRIPE_WEBHOOK_SECRET: 'whsec_selfhosted',
  STRIPE_PRICE_STARTER: 'price_selfhosted1',
};

/** Signs a newcomer up through the console's API; returns their account's plan and a key-less session's status. */
async function signUpOn(h: Harness): Promise<{ accountId: string; cookie: string; csrf: string }> {
  const worker = await startWorker(h);
  try {
    const email = uniqueEmail('selfhost');
    const host = h.config.hosts.console;
    const client = `127.0.4.${Math.floor(Math.random() * 200) + 1}`;
    const req = await h.call('POST', '/v0/auth/email/request', { host, body: { email }, client });
    assert.is(req.status, 202, req.text);
    const token = linkToken((await smtp.next(email)).text);
    const c = await h.call('POST', '/v0/auth/email/confirm', { host, body: { token }, client });
    const pending = c.headers.getSetCookie()[0]!.split(';')[0]!;
    const s = await h.call('POST', '/v0/auth/signup/complete', {
      host,
      headers: { cookie: pending },
      body: { username: `self${Date.now() % 1e7}` },
      client,
    });
    assert.is(s.status, 201, s.text);
    const cookie = s.headers
      .getSetCookie()
      .find((x) => x.startsWith('__Host-platform_session='))!
      .split(';')[0]!;
    return { accountId: s.body.default_account_id, cookie, csrf: s.body.csrf_token };
  } finally {
    await worker.stop();
  }
}

async function planOf(h: Harness, who: { accountId: string; cookie: string }): Promise<string> {
  const r = await h.call('GET', `/v0/accounts/${who.accountId}/status`, {
    host: h.config.hosts.console,
    headers: { cookie: who.cookie },
  });
  assert.is(r.status, 200, r.text);
  return r.body.plan_key;
}

test('a server that sells nothing starts new accounts on Business; PLATFORM_DEFAULT_PLAN chooses another', async () => {
  const priv = await createHarness({ PLATFORM_PLANS_FILE: '', SMTP_URL: smtp.url });
  try {
    assert.is(priv.config.sellsPlans, false);
    assert.is(await planOf(priv, await signUpOn(priv)), 'business');
  } finally {
    await priv.close();
  }
  const chosen = await createHarness({
    PLATFORM_PLANS_FILE: '',
    SMTP_URL: smtp.url,
    PLATFORM_DEFAULT_PLAN: 'starter',
  });
  try {
    assert.is(await planOf(chosen, await signUpOn(chosen)), 'starter');
  } finally {
    await chosen.close();
  }
});

test('a server that sells plans starts new accounts on Free, as before', async () => {
  const selling = await createHarness({ PLATFORM_PLANS_FILE: '', SMTP_URL: smtp.url, ...STRIPE });
  try {
    assert.is(selling.config.sellsPlans, true);
    assert.is(await planOf(selling, await signUpOn(selling)), 'free');
  } finally {
    await selling.close();
  }
});

test("a limit's message names the operator's command where nothing is sold, an upgrade where plans are", async () => {
  for (const [env, says] of [
    [
      {},
      "ask this server's operator for Starter or later (`npm run admin -- set-plan --account <account id> --plan starter`)",
    ],
    [STRIPE, 'To use them, upgrade to Starter or later.'],
  ] as const) {
    const h = await createHarness({
      PLATFORM_PLANS_FILE: '',
      SMTP_URL: smtp.url,
      PLATFORM_DEFAULT_PLAN: 'free',
      ...env,
    });
    try {
      const who = await signUpOn(h);
      const pub = await h.call('PUT', '/v0/apps', {
        host: h.config.hosts.console,
        headers: { cookie: who.cookie, 'x-platform-csrf': who.csrf },
        body: {
          app: { name: 'limits' },
          runtime: { static_root: 'public' },
          files: [
            { path: 'public/index.html', content_type: 'text/html', content_base64: btoa('x') },
          ],
        },
      });
      assert.is(pub.status, 200, pub.text);
      const slug = await h.call('POST', `/v0/apps/${pub.body.app_id}/slugs`, {
        host: h.config.hosts.console,
        headers: { cookie: who.cookie, 'x-platform-csrf': who.csrf },
        body: { slug: `limits-${Date.now() % 1e7}` },
      });
      assert.is(slug.status, 402, slug.text);
      assert.match(slug.body.error.message, says, slug.body.error.message);
    } finally {
      await h.close();
    }
  }
});

test.after(() => smtp.close());
test.run();
