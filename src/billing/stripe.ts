/**
 * The one Stripe client, through the `stripe` SDK only. `STRIPE_API_BASE` points it at another host,
 * port and protocol (a Stripe emulator, the tests' fake); unset, it talks to Stripe itself.
 */
import type Stripe from 'stripe';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { PAID_PLAN_KEYS, type PlanKey } from '../plans/catalogue.ts';

export type PaidPlanKey = (typeof PAID_PLAN_KEYS)[number];

const clients = new WeakMap<Config, Stripe>();

/**
 * The SDK client, or 503 `billing_not_configured` when there is no secret key. The SDK is loaded
 * on first use: most nodes never sell a plan, and its hundreds of modules weigh on every start.
 */
export async function stripeOf(config: Config): Promise<Stripe> {
  const key = config.stripe.secretKey;
  if (!key)
    throw new ApiError(
      'billing_not_configured',
      'Billing is not set up on this platform (STRIPE_SECRET_KEY is missing).',
    );
  let client = clients.get(config);
  if (!client) {
    const base = config.stripe.apiBase ? new URL(config.stripe.apiBase) : undefined;
    const protocol = base?.protocol === 'http:' ? 'http' : 'https';
    const { default: StripeSdk } = await import('stripe');
    client = new StripeSdk(key, {
      ...(base
        ? { host: base.hostname, port: base.port || (protocol === 'http' ? 80 : 443), protocol }
        : {}),
      maxNetworkRetries: 2,
      timeout: 20_000,
      appInfo: { name: 'platform' },
    });
    clients.set(config, client);
  }
  return client;
}

/** The environment variable that names a paid plan's price (what `allowed_upgrade_plans[].stripe_price_env` reports). */
export const PRICE_ENV: Record<PaidPlanKey, string> = {
  starter: 'STRIPE_PRICE_STARTER',
  business: 'STRIPE_PRICE_BUSINESS',
  business_plus: 'STRIPE_PRICE_BUSINESS_PLUS',
  agency: 'STRIPE_PRICE_AGENCY',
};

export function isPaidPlan(key: string): key is PaidPlanKey {
  return (PAID_PLAN_KEYS as readonly string[]).includes(key);
}

/** The plan a Stripe price is mapped to, or null for a price no plan names. */
export function planOfPrice(config: Config, priceId: string | null | undefined): PlanKey | null {
  if (!priceId) return null;
  return PAID_PLAN_KEYS.find((k) => config.stripe.prices[k] === priceId) ?? null;
}

/**
 * What is missing before checkout can sell a plan: the secret key, the webhook secret (or nothing
 * bought would ever be granted) and the plan's price; null when nothing is.
 */
export function missingForSale(config: Config, plan: PaidPlanKey): string | null {
  if (!config.stripe.secretKey) return 'STRIPE_SECRET_KEY';
  if (!config.stripe.webhookSecret) return 'STRIPE_WEBHOOK_SECRET';
  return config.stripe.prices[plan] ? null : PRICE_ENV[plan];
}

/** Whether checkout can sell anything. */
export function billingConfigured(config: Config): boolean {
  return config.sellsPlans; // decided once, where the configuration is read
}

/** A Stripe failure as the contract's error body (never the provider's raw message with its request details). */
export async function viaStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const e = err as { type?: string; statusCode?: number };
    throw new ApiError(
      'payment_provider_failed',
      `Stripe could not ${what}${e.statusCode ? ` (HTTP ${e.statusCode})` : ''}; try again in a moment.`,
      { provider_error: e.type ?? 'connection_error' },
    );
  }
}
