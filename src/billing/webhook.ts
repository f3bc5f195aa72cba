/**
 * `POST /v0/payments/webhook` (and the same handler at `/v0/stripe/webhook`): Stripe's events. No
 * API key: the raw body is verified with the SDK (`constructEventAsync`, 300 s tolerance) before anything
 * is parsed. A handled event resyncs its account from Stripe's API (sync.ts); any other type, or one
 * that names no account of ours, is acknowledged and recorded so it is not processed twice.
 */
import { Hono } from 'hono';
import type Stripe from 'stripe';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { Deps } from '../deps.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { readBodyLimited } from '../http/validate.ts';
import { accountPlanRow } from '../plans/queries.ts';
import { accountOfCustomer, claimStripeEvent, linkCustomer } from './queries.ts';
import { WebhookAck } from './schemas.ts';
import { stripeOf, viaStripe } from './stripe.ts';
import { syncAccount } from './sync.ts';

export const HANDLED_EVENTS = new Set([
  'checkout.session.completed',
  'checkout.session.expired',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
]);
const MAX_BODY = 1024 * 1024;
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const spec = {
  summary: "Stripe's events (signed; no API key)",
  description: `Verifies the \`Stripe-Signature\` header on the raw body (missing, wrong or older than ${SIGNATURE_TOLERANCE_SECONDS} s: 400 \`invalid_stripe_signature\`). Handles ${[...HANDLED_EVENTS].map((t) => `\`${t}\``).join(', ')} by reading the account's subscriptions from Stripe again; any other type is acknowledged with \`handled: false\`. Each event id takes effect once, however often it is delivered. Also served at \`/v0/stripe/webhook\`.`,
  tags: ['Billing'],
  security: 'none' as const,
  responses: { 200: WebhookAck },
  errors: [
    'invalid_stripe_signature',
    'billing_not_configured',
    'payment_provider_failed',
    'payload_too_large',
  ] satisfies ErrorCode[],
};
const receive = operation({ ...spec, operationId: 'paymentsWebhook' });
/** The same handler under the provider's own name (the contract's path segment stands for it). */
const receiveStripe = operation({
  ...spec,
  operationId: 'stripeWebhook',
  summary: "The payments webhook, under the provider's name",
});

function idOf(ref: string | { id: string } | null | undefined): string | undefined {
  return typeof ref === 'string' ? ref : (ref?.id ?? undefined);
}

/** The account an event is about: by its customer, else by the checkout's client_reference_id or metadata, else the customer's metadata. */
async function accountFor(
  deps: Deps,
  stripe: Stripe,
  obj: Record<string, unknown>,
  customerId: string | undefined,
): Promise<string | undefined> {
  if (customerId) {
    const linked = await accountOfCustomer(deps.db, customerId);
    if (linked) return linked;
  }
  const meta = (obj.metadata ?? {}) as Record<string, string>;
  let candidate =
    (typeof obj.client_reference_id === 'string' ? obj.client_reference_id : undefined) ??
    meta.account_id;
  if (!candidate && customerId) {
    const customer = await viaStripe('read the customer', () =>
      stripe.customers.retrieve(customerId).catch((err: { statusCode?: number }) => {
        if (err.statusCode === 404) return null; // not a customer of this Stripe account: nothing of ours
        throw err;
      }),
    );
    if (customer && !('deleted' in customer && customer.deleted))
      candidate = (customer as Stripe.Customer).metadata?.account_id;
  }
  if (!candidate || !customerId || !(await accountPlanRow(deps.db, candidate))) return undefined;
  await linkCustomer(deps.db, candidate, customerId);
  return (await accountOfCustomer(deps.db, customerId)) ?? undefined;
}

export function paymentsWebhookRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  const handler = async (c: import('hono').Context<Env>) => {
    const deps = c.var.deps;
    const secret = deps.config.stripe.webhookSecret;
    if (!secret)
      throw new ApiError(
        'billing_not_configured',
        'Billing is not set up on this platform (STRIPE_WEBHOOK_SECRET is missing).',
      );
    const stripe = await stripeOf(deps.config);
    const signature = c.req.header('stripe-signature');
    if (!signature)
      throw new ApiError('invalid_stripe_signature', 'The Stripe-Signature header is missing.');
    const body = Buffer.from(
      await readBodyLimited(
        c.req.raw,
        MAX_BODY,
        () => new ApiError('payload_too_large', 'Stripe events are limited to 1 MiB.'),
      ),
    );
    let event: Stripe.Event;
    try {
      // the async check: on Deno the SDK verifies with Web Crypto, which has no synchronous form
      event = await stripe.webhooks.constructEventAsync(
        body,
        signature,
        secret,
        SIGNATURE_TOLERANCE_SECONDS,
      );
    } catch (err) {
      throw new ApiError(
        'invalid_stripe_signature',
        `The Stripe signature does not verify: ${(err as Error).message.split('\n')[0]!.slice(0, 200)}`,
      );
    }
    const ack = (handled: boolean, duplicate: boolean) =>
      receive.reply(c, 200, {
        received: true,
        event_id: event.id,
        type: event.type,
        handled,
        duplicate,
      });
    const obj = event.data.object as unknown as Record<string, unknown>;
    const customerId = idOf(obj.customer as string | { id: string } | null | undefined);
    const accountId = HANDLED_EVENTS.has(event.type)
      ? await accountFor(deps, stripe, obj, customerId)
      : undefined;
    if (!accountId || !customerId) {
      const fresh = await claimStripeEvent(deps.db, {
        id: event.id,
        type: event.type,
        accountId: null,
      });
      if (HANDLED_EVENTS.has(event.type))
        deps.log.warn('stripe event names no account of ours', {
          event_id: event.id,
          type: event.type,
        });
      return ack(false, !fresh);
    }
    const result = await viaStripe('read the subscriptions', () =>
      syncAccount(deps, {
        accountId,
        customerId,
        event: { id: event.id, type: event.type },
        source: 'webhook',
      }),
    );
    return ack(true, result.duplicate);
  };
  r.post('/payments/webhook', receive, handler);
  r.post('/stripe/webhook', receiveStripe, handler);
  return r;
}
