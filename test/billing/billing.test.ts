/**
 * Stripe billing end to end: the real `stripe` SDK against a Stripe API on loopback
 * (test/_lib/fake-stripe.ts), events signed by the SDK's own test helper. Checkout, the portal,
 * each event type, replays, signatures, events in any order, grace periods, cancellation and
 * recovery, the daily reconciliation, and who may do what.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { newId } from '../../src/lib/ids.ts';
import { createSession } from '../../src/sign-in/sessions.ts';
import { setPlan } from '../../src/plans/operator.ts';
import { reconcileBilling } from '../../worker/tasks/billing-reconcile.ts';
import { site } from '../_lib/bundles.ts';
import { startFakeStripe } from '../_lib/fake-stripe.ts';
import { createHarness, listen, newMember, newUser, type Harness } from '../_lib/harness.ts';
import { spawn } from 'node:child_process';
import path from 'node:path';

const SECRET = `sk_test_${randomBytes(12).toString('hex')}`;
const WHSEC = `whsec_${randomBytes(24)
  .toString('base64')
  .replace(/[^A-Za-z0-9]/g, '')}`;
const PRICES = {
  starter: 'price_starter1',
  business: 'price_business1',
  business_plus: 'price_bplus1',
  agency: 'price_agency1',
};
const fake = await startFakeStripe({ secretKey: SECRET });
const h = await createHarness({
  PLATFORM_PLANS_FILE: '',
  STRIPE_SECRET_KEY: SECRET,
  STRIPE_WEBHOOK_SECRET: WHSEC,
  STRIPE_API_BASE: fake.url,
  STRIPE_PRICE_STARTER: PRICES.starter,
  STRIPE_PRICE_BUSINESS: PRICES.business,
  STRIPE_PRICE_BUSINESS_PLUS: PRICES.business_plus,
  STRIPE_PRICE_AGENCY: PRICES.agency,
});
const signer = new Stripe(SECRET);

type Delivered = { status: number; body: any; text: string };
function eventOf(type: string, object: Record<string, unknown>) {
  return {
    id: `evt_${randomBytes(10).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: null,
    type,
    data: { object },
  };
}
async function deliver(
  event: ReturnType<typeof eventOf>,
  opts: {
    timestamp?: number;
    payload?: string;
    path?: string;
    header?: string | null;
    target?: Harness;
  } = {},
): Promise<Delivered> {
  const payload = opts.payload ?? JSON.stringify(event);
  const header =
    opts.header === undefined
      ? await signer.webhooks.generateTestHeaderStringAsync({
          payload: JSON.stringify(event),
          secret: WHSEC,
          timestamp: opts.timestamp,
        })
      : opts.header;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (header !== null) headers['stripe-signature'] = header;
  return (opts.target ?? h).call('POST', opts.path ?? '/v0/payments/webhook', {
    rawBody: payload,
    headers,
    key: null,
  });
}
const send = (type: string, object: Record<string, unknown>) => deliver(eventOf(type, object));

async function plan(key: string, account?: string) {
  return h.api('GET /v0/billing/plan', { key, account });
}

/** An owner who went through Checkout for `planKey` and paid (Stripe's side), before any event arrived. */
async function paidCheckout(planKey: 'starter' | 'business' = 'starter') {
  const u = await newUser(h);
  const session = await h.api('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: planKey },
  });
  const { subscription } = fake.completeCheckout(session.id);
  return { u, session, subscription };
}

test('not configured: the plan says so and every billing mutation is 503', async () => {
  const bare = await createHarness({ PLATFORM_PLANS_FILE: '' });
  try {
    const u = await newUser(bare);
    const p = await bare.api('GET /v0/billing/plan', { key: u.api_key });
    assert.is(p.billing_configured, false);
    assert.ok(p.allowed_upgrade_plans.every((x) => !x.configured && x.stripe_price_id === null));
    const checkout = await bare.answer('POST /v0/billing/checkout-session', {
      key: u.api_key,
      body: { plan_key: 'starter' },
    });
    assert.is(checkout.status, 503);
    assert.is(checkout.ok ? '' : checkout.error.code, 'billing_not_configured');
    assert.is(
      (await bare.answer('POST /v0/billing/portal-session', { key: u.api_key })).status,
      503,
    );
    const hook = await deliver(eventOf('invoice.paid', {}), { target: bare });
    assert.is(hook.status, 503);
    assert.is(hook.body.error.code, 'billing_not_configured');
  } finally {
    await bare.close();
  }
});

test('the Billing plan record of a new account, with the plans it can buy', async () => {
  const u = await newUser(h);
  const p = await plan(u.api_key);
  assert.equal(
    { ...p, allowed_upgrade_plans: undefined },
    {
      account_id: u.account_id,
      plan_key: 'free',
      entitlement_source: 'default',
      billing_access_state: 'active',
      grace_ends_at: null,
      billing_configured: true,
      stripe_customer: null,
      subscription: null,
      allowed_upgrade_plans: undefined,
    },
  );
  assert.equal(
    p.allowed_upgrade_plans.map((x) => [
      x.plan_key,
      x.stripe_price_env,
      x.stripe_price_id,
      x.configured,
    ]),
    [
      ['starter', 'STRIPE_PRICE_STARTER', PRICES.starter, true],
      ['business', 'STRIPE_PRICE_BUSINESS', PRICES.business, true],
      ['business_plus', 'STRIPE_PRICE_BUSINESS_PLUS', PRICES.business_plus, true],
      ['agency', 'STRIPE_PRICE_AGENCY', PRICES.agency, true],
    ],
  );
  assert.is(p.allowed_upgrade_plans[0]!.price_monthly_usd, 9);
});

test('checkout: only the four paid plans, only owners and admins; one customer per account; the redirect grants nothing', async () => {
  const u = await newUser(h);
  for (const bad of ['free', 'internal', 'gold', PRICES.starter, '']) {
    const r = await h.answer('POST /v0/billing/checkout-session', {
      key: u.api_key,
      body: { plan_key: bad },
    });
    assert.is(r.status, 400, bad);
    assert.is(r.ok ? '' : r.error.code, 'invalid_billing_plan', bad);
  }
  for (const role of ['viewer', 'developer'] as const) {
    const m = await newMember(h, u.account_id, role);
    const r = await h.answer('POST /v0/billing/checkout-session', {
      key: m.api_key,
      account: u.account_id,
      body: { plan_key: 'starter' },
    });
    assert.is(r.status, 403, role);
    assert.is(
      (await h.answer('POST /v0/billing/portal-session', { key: m.api_key, account: u.account_id }))
        .status,
      403,
      role,
    );
    assert.is(
      (await h.answer('GET /v0/billing/plan', { key: m.api_key, account: u.account_id })).status,
      200,
      `${role} reads the plan`,
    );
  }
  const admin = await newMember(h, u.account_id, 'admin');
  const customersBefore = fake.customers.size;
  const first = await h.api('POST /v0/billing/checkout-session', {
    key: admin.api_key,
    account: u.account_id,
    body: { plan_key: 'business' },
  });
  assert.match(first.id, /^cs_test_/);
  assert.ok(first.url.startsWith(`${fake.url}/checkout/`), first.url);
  assert.ok(first.expires_at && Date.parse(first.expires_at) > Date.now());
  const sent = fake.sessions.get(first.id)!;
  assert.is(sent.client_reference_id, u.account_id);
  assert.is(sent.price, PRICES.business);
  assert.match(
    String(sent.success_url),
    /^http:\/\/console\.localhost:\d+\/billing\?checkout=success&session_id=\{CHECKOUT_SESSION_ID\}$/,
  );
  const customer = fake.customers.get(String(sent.customer))!;
  assert.equal(customer.metadata, { account_id: u.account_id });
  await h.api('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'starter' },
  });
  assert.is(fake.customers.size, customersBefore + 1, 'the second checkout reuses the customer');
  // an Idempotency-Key makes a retried request the same session
  const a = await h.call('POST', '/v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'starter' },
    headers: { 'idempotency-key': 'retry-1' },
  });
  const b = await h.call('POST', '/v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'starter' },
    headers: { 'idempotency-key': 'retry-1' },
  });
  assert.is(a.body.id, b.body.id);
  // paying and coming back to the success URL changes nothing until Stripe's event arrives
  fake.completeCheckout(first.id);
  await h.call('GET', `/billing?checkout=success&session_id=${first.id}`, {
    host: h.config.hosts.console,
  });
  assert.is((await plan(u.api_key)).plan_key, 'free');
  assert.equal((await plan(u.api_key)).stripe_customer, { id: customer.id as string });
});

test('checkout.session.completed grants the paid plan from the subscription Stripe reports; the new limits apply', async () => {
  const { u, session, subscription } = await paidCheckout('business');
  const r = await send('checkout.session.completed', {
    id: session.id,
    object: 'checkout.session',
    customer: subscription.customer,
    client_reference_id: u.account_id,
    subscription: subscription.id,
    metadata: {},
  });
  assert.is(r.status, 200, r.text);
  assert.equal(
    { ...r.body, event_id: undefined },
    {
      received: true,
      event_id: undefined,
      type: 'checkout.session.completed',
      handled: true,
      duplicate: false,
    },
  );
  const p = await plan(u.api_key);
  assert.is(p.plan_key, 'business');
  assert.is(p.entitlement_source, 'stripe');
  assert.is(p.billing_access_state, 'active');
  assert.equal(
    { ...p.subscription, current_period_end: undefined },
    {
      id: subscription.id,
      status: 'active',
      price_id: PRICES.business,
      plan_key: 'business',
      current_period_end: undefined,
      cancel_at_period_end: false,
    },
  );
  assert.ok(Date.parse(p.subscription!.current_period_end!) > Date.now());
  const limits = await h.api('GET /v0/accounts/{account_id}/limits', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(limits.deployment_limits['apps.max'], 50);
  assert.is(limits.runtime_limits['server.cpu_ms.max'], 5000);
  // a live subscription changes plans in the portal, not through a second checkout
  const again = await h.answer('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'agency' },
  });
  assert.is(again.status, 409);
  const portal = await h.api('POST /v0/billing/portal-session', { key: u.api_key });
  assert.ok(portal.url.startsWith(`${fake.url}/portal/`));
});

test('the same event five times at once has one effect', async () => {
  const { u, session, subscription } = await paidCheckout();
  const event = eventOf('checkout.session.completed', {
    id: session.id,
    object: 'checkout.session',
    customer: subscription.customer,
    client_reference_id: u.account_id,
    subscription: subscription.id,
  });
  const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(event)));
  assert.ok(
    answers.every((a) => a.status === 200),
    answers.map((a) => a.text).join('\n'),
  );
  assert.is(answers.filter((a) => !a.body.duplicate).length, 1);
  const history = await h.deps.db
    .selectFrom('billing_history')
    .select(['stripe_event_id', 'to_plan_key'])
    .where('account_id', '=', u.account_id)
    .execute();
  assert.equal(history, [{ stripe_event_id: event.id, to_plan_key: 'starter' }]);
  const recorded = await h.deps.db
    .selectFrom('stripe_events')
    .select('id')
    .where('id', '=', event.id)
    .execute();
  assert.is(recorded.length, 1);
  // the other path is the same handler
  const later = await deliver(event, { path: '/v0/stripe/webhook' });
  assert.is(later.body.duplicate, true);
});

test('signatures: missing, stale (301 s), one flipped byte or a re-serialised body are refused before anything is read', async () => {
  const { u, session, subscription } = await paidCheckout();
  const event = eventOf('checkout.session.completed', {
    id: session.id,
    object: 'checkout.session',
    customer: subscription.customer,
    client_reference_id: u.account_id,
    subscription: subscription.id,
  });
  const payload = JSON.stringify(event);
  const flipped = payload.replace('"checkout.session.completed"', '"checkout.session.completeD"');
  const cases: [string, Delivered][] = [
    ['missing', await deliver(event, { header: null })],
    ['stale', await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 301 })],
    ['flipped byte', await deliver(event, { payload: flipped })],
    ['re-serialised', await deliver(event, { payload: JSON.stringify(event, null, 2) })],
    [
      'another secret',
      await deliver(event, {
        header: await signer.webhooks.generateTestHeaderStringAsync({
          payload,
          secret: 'whsec_other',
        }),
      }),
    ],
  ];
  for (const [name, r] of cases) {
    assert.is(r.status, 400, name);
    assert.is(r.body.error.code, 'invalid_stripe_signature', name);
  }
  assert.is((await plan(u.api_key)).plan_key, 'free', 'nothing was applied');
  assert.is(
    (await h.deps.db.selectFrom('stripe_events').select('id').where('id', '=', event.id).execute())
      .length,
    0,
  );
  assert.is(
    (await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 200 })).status,
    200,
    'within the tolerance',
  );
});

test('other event types are acknowledged as ignored; events for customers we do not know change nothing', async () => {
  const r = await send('customer.created', { id: 'cus_x', object: 'customer' });
  assert.is(r.status, 200);
  assert.is(r.body.handled, false);
  const stranger = fake.customers.size;
  const unknown = await send('invoice.paid', {
    id: 'in_1',
    object: 'invoice',
    customer: 'cus_doesnotexist',
  });
  assert.is(unknown.status, 200, unknown.text);
  assert.is(unknown.body.handled, false);
  assert.is(fake.customers.size, stranger);
});

test('invoice.payment_failed before checkout.session.completed: grace with an end date, then the right final state', async () => {
  const { u, session, subscription } = await paidCheckout();
  fake.update(subscription.id, { status: 'past_due' });
  const failed = await send('invoice.payment_failed', {
    id: 'in_f',
    object: 'invoice',
    customer: subscription.customer,
    subscription: subscription.id,
  });
  assert.is(failed.status, 200, failed.text);
  let p = await plan(u.api_key);
  assert.is(p.plan_key, 'starter');
  assert.is(p.billing_access_state, 'past_due_grace');
  const graceEnd = Date.parse(p.grace_ends_at!);
  assert.ok(Math.abs(graceEnd - (Date.now() + 14 * 86_400_000)) < 60_000, p.grace_ends_at!);
  await send('checkout.session.completed', {
    id: session.id,
    object: 'checkout.session',
    customer: subscription.customer,
    client_reference_id: u.account_id,
    subscription: subscription.id,
  });
  p = await plan(u.api_key);
  assert.is(p.billing_access_state, 'past_due_grace', 'the older event does not undo the failure');
  assert.is(Date.parse(p.grace_ends_at!), graceEnd, 'the grace end is set once');
  // apps stay online; a new paid feature is refused
  const app = await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  assert.is((await h.call('GET', '/', { host: `${app.body.app_id}.apps.localhost` })).status, 200);
  const hook = await h.call('PUT', `/v0/apps/${app.body.app_id}`, {
    key: u.api_key,
    body: site({ resources: { webhooks: { w: { provider: 'none' } } } }),
  });
  assert.is(hook.status, 402);
  assert.is(hook.body.error.code, 'billing_restricted');
  // the card works again
  fake.update(subscription.id, { status: 'active' });
  await send('invoice.paid', {
    id: 'in_p',
    object: 'invoice',
    customer: subscription.customer,
    subscription: subscription.id,
  });
  p = await plan(u.api_key);
  assert.is(p.billing_access_state, 'active');
  assert.is(p.grace_ends_at, null);
});

test('every order of a realistic event sequence ends in the same account state', async () => {
  const types = [
    'checkout.session.completed',
    'customer.subscription.created',
    'invoice.paid',
    'customer.subscription.updated',
  ];
  const orders: string[][] = [];
  const permute = (rest: string[], acc: string[]) =>
    rest.length
      ? rest.forEach((t, i) => permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, t]))
      : orders.push(acc);
  permute(types, []);
  assert.is(orders.length, 24);
  const finals = new Set<string>();
  for (const order of orders) {
    const { u, session, subscription } = await paidCheckout('starter');
    // by the time the events arrive, the customer has moved up to Business (Stripe's truth)
    fake.update(subscription.id, { price: PRICES.business });
    for (const type of order) {
      const object = type.startsWith('checkout')
        ? {
            id: session.id,
            object: 'checkout.session',
            customer: subscription.customer,
            client_reference_id: u.account_id,
            subscription: subscription.id,
          }
        : type.startsWith('invoice')
          ? {
              id: `in_${randomBytes(4).toString('hex')}`,
              object: 'invoice',
              customer: subscription.customer,
              subscription: subscription.id,
            }
          : { ...subscription };
      const r = await send(type, object);
      assert.is(r.status, 200, r.text);
    }
    const p = await plan(u.api_key);
    finals.add(
      JSON.stringify([
        p.plan_key,
        p.entitlement_source,
        p.billing_access_state,
        p.grace_ends_at,
        p.subscription?.plan_key,
      ]),
    );
  }
  assert.equal([...finals], [JSON.stringify(['business', 'stripe', 'active', null, 'business'])]);
});

test('cancel → Free, routes over Free disabled, data kept; unpaid past grace → restricted until payment brings the routes back', async () => {
  const { u, session, subscription } = await paidCheckout();
  await send('checkout.session.completed', {
    id: session.id,
    object: 'checkout.session',
    customer: subscription.customer,
    client_reference_id: u.account_id,
    subscription: subscription.id,
  });
  const app = (await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() })).body
    .app_id as string;
  const route = newId('route');
  await sql`insert into app_routes (id, app_id, account_id, route_type, hostname, status) values (${route}, ${app}, ${u.account_id}, 'slug', ${`s-${app}.apps.localhost`}, 'active')`.execute(
    h.deps.db,
  );

  // payment fails, and the grace period runs out (the daily reconciliation notices)
  fake.update(subscription.id, { status: 'past_due' });
  await send('invoice.payment_failed', {
    id: 'in_1',
    object: 'invoice',
    customer: subscription.customer,
    subscription: subscription.id,
  });
  assert.is((await plan(u.api_key)).billing_access_state, 'past_due_grace');
  await reconcileBilling(h.deps, new Date(Date.now() + 15 * 86_400_000));
  let p = await plan(u.api_key);
  assert.equal([p.plan_key, p.billing_access_state], ['free', 'restricted']);
  const routeRow = () =>
    h.deps.db
      .selectFrom('app_routes')
      .select('status')
      .where('id', '=', route)
      .executeTakeFirstOrThrow();
  assert.is((await routeRow()).status, 'disabled_billing');
  assert.is(
    (await h.call('GET', '/', { host: `${app}.apps.localhost` })).status,
    200,
    'the canonical origin keeps serving',
  );

  // the payment goes through: the plan and the routes come back
  fake.update(subscription.id, { status: 'active' });
  await send('invoice.paid', {
    id: 'in_2',
    object: 'invoice',
    customer: subscription.customer,
    subscription: subscription.id,
  });
  p = await plan(u.api_key);
  assert.equal(
    [p.plan_key, p.billing_access_state, p.entitlement_source],
    ['starter', 'active', 'stripe'],
  );
  assert.is((await routeRow()).status, 'active');

  // cancelled: Free, the route disabled by the downgrade, the app and its data kept
  fake.update(subscription.id, { status: 'canceled' });
  await send('customer.subscription.deleted', { ...fake.subscriptions.get(subscription.id)! });
  p = await plan(u.api_key);
  assert.equal(
    [p.plan_key, p.entitlement_source, p.billing_access_state],
    ['free', 'default', 'active'],
  );
  assert.is((await routeRow()).status, 'disabled_downgrade');
  assert.is(
    (await h.answer('GET /v0/apps/{app_id}', { key: u.api_key, params: { app_id: app } })).status,
    200,
  );
  const history = await h.deps.db
    .selectFrom('billing_history')
    .select(['to_plan_key', 'to_state', 'source'])
    .where('account_id', '=', u.account_id)
    .orderBy('id')
    .execute();
  assert.equal(
    history.map((x) => `${x.source}:${x.to_plan_key}/${x.to_state}`),
    [
      'webhook:starter/active',
      'webhook:starter/past_due_grace',
      'reconcile:free/restricted',
      'webhook:starter/active',
      'webhook:free/active',
    ],
  );
});

test('a lost webhook heals at the daily reconciliation; an unknown price keeps the plan and says so', async () => {
  const { u, subscription } = await paidCheckout();
  await reconcileBilling(h.deps);
  assert.is(
    (await plan(u.api_key)).plan_key,
    'starter',
    'no event was delivered: the reconciliation found the subscription',
  );
  fake.update(subscription.id, { price: 'price_legacy_2019' });
  await reconcileBilling(h.deps);
  const p = await plan(u.api_key);
  assert.is(p.plan_key, 'starter');
  assert.is(p.subscription?.price_id, 'price_legacy_2019');
  assert.is(p.subscription?.plan_key, null);
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.ok(
    status.compatibility_warnings.some(
      (w) => w.type === 'billing' && w.message.includes('price_legacy_2019'),
    ),
    JSON.stringify(status.compatibility_warnings),
  );
});

test('portal before any purchase is 409; checkout to a plan the account does not fit is 409; Stripe failing is 502', async () => {
  const u = await newUser(h);
  const portal = await h.answer('POST /v0/billing/portal-session', { key: u.api_key });
  assert.is(portal.status, 409);
  assert.is(portal.ok ? '' : portal.error.code, 'billing_customer_missing');
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' });
  const collections = Object.fromEntries(
    Array.from({ length: 25 }, (_, i) => [`c${i}`, { fields: { t: 'string' } }]),
  );
  assert.is(
    (
      await h.call('PUT', '/v0/apps', {
        key: u.api_key,
        body: site({ resources: { data: { collections } } }),
      })
    ).status,
    200,
  );
  const lower = await h.answer('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'starter' },
  });
  assert.is(lower.status, 409);
  assert.is(lower.ok ? '' : lower.error.code, 'downgrade_incompatible');
  fake.failNext(10);
  const down = await h.answer('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'agency' },
  });
  fake.failNext(0);
  assert.is(down.status, 502);
  assert.is(down.ok ? '' : down.error.code, 'payment_provider_failed');
});

test('checkout.session.expired (a checkout nobody paid) leaves the account as it was', async () => {
  const u = await newUser(h);
  const session = await h.api('POST /v0/billing/checkout-session', {
    key: u.api_key,
    body: { plan_key: 'starter' },
  });
  const sent = fake.sessions.get(session.id)!;
  const r = await send('checkout.session.expired', {
    id: session.id,
    object: 'checkout.session',
    status: 'expired',
    customer: sent.customer,
    client_reference_id: u.account_id,
    subscription: null,
  });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.handled, true);
  const p = await plan(u.api_key);
  assert.equal(
    [p.plan_key, p.entitlement_source, p.billing_access_state, p.subscription],
    ['free', 'default', 'active', null],
  );
});

test('from the console: a session needs its CSRF header and an Origin on billing mutations', async () => {
  const u = await newUser(h);
  const { token, session } = await createSession(h.deps.db, u.user_id);
  const headers = {
    cookie: `__Host-platform_session=${token}`,
    'x-platform-csrf': session.csrfToken,
  };
  const consoleOrigin = `http://${h.config.hosts.console}:8787`;
  const noOrigin = await h.call('POST', '/v0/billing/checkout-session', {
    host: h.config.hosts.console,
    body: { plan_key: 'starter' },
    headers,
  });
  assert.is(noOrigin.status, 403);
  assert.is(noOrigin.body.error.code, 'csrf_rejected');
  const foreign = await h.call('POST', '/v0/billing/portal-session', {
    host: h.config.hosts.console,
    headers: { ...headers, origin: 'http://127.0.0.1:9' },
  });
  assert.is(foreign.body.error.code, 'csrf_rejected');
  const ok = await h.call('POST', '/v0/billing/checkout-session', {
    host: h.config.hosts.console,
    body: { plan_key: 'starter' },
    headers: { ...headers, origin: consoleOrigin },
  });
  assert.is(ok.status, 200, ok.text);
  const read = await h.call('GET', '/v0/billing/plan', {
    host: h.config.hosts.console,
    headers: { cookie: headers.cookie },
  });
  assert.is(read.status, 200);
});

test('a new user upgrades from the CLI: Checkout link, payment, the new limits', async () => {
  const live = await listen(h.server);
  const u = await newUser(h);
  const cli = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const child = spawn(process.execPath, [path.resolve('src/cli/bin.mjs'), ...args], {
        env: {
          ...process.env,
          PLATFORM_API_URL: live.url,
          PLATFORM_API_KEY: u.api_key,
          NO_COLOR: '1',
        },
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code: code ?? -1, out }));
    });
  try {
    const before = await cli(['billing']);
    assert.is(before.code, 0, before.out);
    assert.match(before.out, /Plan\s+free \(default\)\s+billing active/);
    assert.match(before.out, /starter\s+\$9\/month/);
    const wrong = await cli(['billing', 'upgrade', 'price_starter1']);
    assert.is(wrong.code, 1);
    assert.match(wrong.out, 'invalid_billing_plan');
    const up = await cli(['billing', 'upgrade', 'starter']);
    assert.is(up.code, 0, up.out);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/checkout\/\w+)/.exec(up.out)?.[1];
    assert.ok(url, up.out);
    const session = [...fake.sessions.values()].find((x) => x.url === url)!;
    const { subscription } = fake.completeCheckout(String(session.id));
    await send('checkout.session.completed', {
      id: session.id,
      object: 'checkout.session',
      customer: subscription.customer,
      client_reference_id: u.account_id,
      subscription: subscription.id,
    });
    const account = await cli(['account']);
    assert.match(account.out, /Plan\s+starter/);
    assert.match(account.out, /published apps\s+░+ 0 of 10/);
    const after = await cli(['billing']);
    assert.match(after.out, new RegExp(`Subscription\\s+${subscription.id} active, renews`));
    const portal = await cli(['billing', 'portal']);
    assert.is(portal.code, 0, portal.out);
    assert.match(portal.out, `${fake.url}/portal/`);
  } finally {
    await live.close();
  }
});

test.after(async () => {
  await h.close();
  await fake.close();
});
test.run();
