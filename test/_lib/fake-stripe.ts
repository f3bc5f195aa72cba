/**
 * A Stripe API on loopback for the few calls the platform makes, speaking Stripe's HTTP protocol:
 * form-encoded requests with a Bearer secret key, Stripe-shaped JSON objects and lists, error
 * bodies `{error: {type, message}}`, and `Idempotency-Key` replays. Stateful: customers, checkout
 * sessions, portal sessions and subscriptions. The platform reaches it through the real `stripe`
 * SDK with STRIPE_API_BASE; tests change Stripe's state with the helpers (what a customer paying,
 * failing to pay or cancelling does) and then deliver signed events.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

type Json = Record<string, unknown>;
export type FakeSubscription = {
  id: string;
  object: 'subscription';
  status: string;
  customer: string;
  cancel_at_period_end: boolean;
  created: number;
  metadata: Record<string, string>;
  items: {
    object: 'list';
    data: {
      id: string;
      object: 'subscription_item';
      price: { id: string; object: 'price' };
      current_period_start: number;
      current_period_end: number;
    }[];
    has_more: false;
    url: string;
  };
};

const id = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

export type FakeStripe = Awaited<ReturnType<typeof startFakeStripe>>;

export async function startFakeStripe(options: { secretKey: string }) {
  const customers = new Map<string, Json>();
  const sessions = new Map<
    string,
    Json & { customer: string; price: string; metadata: Record<string, string> }
  >();
  const subscriptions = new Map<string, FakeSubscription>();
  const idempotent = new Map<string, { status: number; body: Json }>();
  const calls: { method: string; path: string; params: Record<string, string> }[] = [];
  let failNext = 0;

  const list = (data: unknown[], url: string) => ({ object: 'list', data, has_more: false, url });
  const error = (status: number, type: string, message: string) => ({
    status,
    body: { error: { type, message } },
  });

  function route(
    method: string,
    path: string,
    params: Record<string, string>,
    origin: string,
  ): { status: number; body: Json } {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const metadata = pick(params, 'metadata');
      const c = {
        id: id('cus'),
        object: 'customer',
        email: params.email ?? null,
        name: params.name ?? null,
        metadata,
        created: now(),
      };
      customers.set(c.id, c);
      return { status: 200, body: c };
    }
    if (method === 'GET' && (m = /^\/v1\/customers\/([\w]+)$/.exec(path))) {
      const c = customers.get(m[1]!);
      return c
        ? { status: 200, body: c }
        : error(404, 'invalid_request_error', `No such customer: '${m[1]}'`);
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const customer = params.customer;
      if (!customer || !customers.has(customer))
        return error(400, 'invalid_request_error', `No such customer: '${customer}'`);
      const price = params['line_items[0][price]'];
      if (!price)
        return error(400, 'invalid_request_error', 'Missing required param: line_items[0][price].');
      if (params.mode !== 'subscription')
        return error(400, 'invalid_request_error', 'mode must be subscription here');
      const s = {
        id: id('cs_test'),
        object: 'checkout.session',
        mode: 'subscription',
        status: 'open',
        customer,
        client_reference_id: params.client_reference_id ?? null,
        metadata: pick(params, 'metadata'),
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        url: `${origin}/checkout/${randomBytes(6).toString('hex')}`,
        expires_at: now() + 24 * 3600,
        subscription: null as string | null,
        price,
      };
      sessions.set(s.id, s);
      return { status: 200, body: s };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!params.customer || !customers.has(params.customer))
        return error(400, 'invalid_request_error', `No such customer: '${params.customer}'`);
      return {
        status: 200,
        body: {
          id: id('bps'),
          object: 'billing_portal.session',
          customer: params.customer,
          return_url: params.return_url ?? null,
          url: `${origin}/portal/${randomBytes(6).toString('hex')}`,
        },
      };
    }
    if (method === 'GET' && path === '/v1/subscriptions') {
      const all = [...subscriptions.values()].filter(
        (s) => !params.customer || s.customer === params.customer,
      );
      const visible =
        params.status === 'all'
          ? all
          : all.filter((s) => s.status !== 'canceled' && s.status !== 'incomplete_expired');
      return {
        status: 200,
        body: list(
          visible.sort((a, b) => b.created - a.created),
          '/v1/subscriptions',
        ),
      };
    }
    if (method === 'GET' && (m = /^\/v1\/subscriptions\/([\w]+)$/.exec(path))) {
      const s = subscriptions.get(m[1]!);
      return s
        ? { status: 200, body: s }
        : error(404, 'invalid_request_error', `No such subscription: '${m[1]}'`);
    }
    return error(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const params = Object.fromEntries(
        new URLSearchParams(req.method === 'GET' ? url.search : raw),
      );
      calls.push({ method: req.method ?? 'GET', path: url.pathname, params });
      const send = (status: number, body: Json) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${options.secretKey}`)
        return send(401, {
          error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' },
        });
      if (failNext > 0) {
        failNext--;
        return send(500, {
          error: { type: 'api_error', message: 'Something went wrong on our end.' },
        });
      }
      const key = req.headers['idempotency-key'];
      const idemKey =
        typeof key === 'string' && req.method === 'POST' ? `${url.pathname} ${key}` : undefined;
      const replay = idemKey ? idempotent.get(idemKey) : undefined;
      if (replay) return send(replay.status, replay.body);
      const out = route(req.method ?? 'GET', url.pathname, params, origin);
      if (idemKey && out.status < 500) idempotent.set(idemKey, out);
      send(out.status, out.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function subscribe(customer: string, price: string, status = 'active'): FakeSubscription {
    const t = now();
    const s: FakeSubscription = {
      id: id('sub'),
      object: 'subscription',
      status,
      customer,
      cancel_at_period_end: false,
      created: t + subscriptions.size, // distinct, increasing
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: id('si'),
            object: 'subscription_item',
            price: { id: price, object: 'price' },
            current_period_start: t,
            current_period_end: t + 30 * 86400,
          },
        ],
        has_more: false,
        url: '/v1/subscription_items',
      },
    };
    subscriptions.set(s.id, s);
    return s;
  }

  return {
    url: origin,
    calls,
    customers,
    sessions,
    subscriptions,
    /** The next n requests answer 500 (Stripe having a bad moment). */
    failNext(n: number) {
      failNext = n;
    },
    /** The customer pays on the checkout page: the session completes with an active subscription. */
    completeCheckout(
      sessionId: string,
      status = 'active',
    ): { session: Json; subscription: FakeSubscription } {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no session ${sessionId}`);
      const sub = subscribe(s.customer, s.price, status);
      s.status = 'complete';
      s.subscription = sub.id;
      return { session: { ...s }, subscription: sub };
    },
    subscribe,
    /** Stripe changes a subscription (a failed renewal, a payment, a cancellation, a plan change). */
    update(
      subId: string,
      change: { status?: string; price?: string; cancel_at_period_end?: boolean },
    ): FakeSubscription {
      const s = subscriptions.get(subId)!;
      if (change.status) s.status = change.status;
      if (change.price) s.items.data[0]!.price.id = change.price;
      if (change.cancel_at_period_end !== undefined)
        s.cancel_at_period_end = change.cancel_at_period_end;
      return s;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** `metadata[account_id]=x` → `{account_id: 'x'}`. */
function pick(params: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    const m = new RegExp(`^${prefix}\\[([^\\]]+)\\]$`).exec(k);
    if (m) out[m[1]!] = v;
  }
  return out;
}
