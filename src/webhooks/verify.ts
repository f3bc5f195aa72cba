/**
 * Signature checks for inbound webhooks, on the raw bytes, before anything is parsed.
 * - generic_hmac: the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 *   `webhook-signature: v1,<base64>` over `id.timestamp.body`, several signatures, ±5 minutes),
 *   verified by the `standardwebhooks` library; the secret in `whsec_` form or raw.
 * - code_host: `X-Hub-Signature-256: sha256=<hex>` = HMAC-SHA256 of the raw body, compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export type Provider = 'none' | 'generic_hmac' | 'code_host';
export type Verdict =
  | { ok: true; deliveryId: string | null }
  | { ok: false; reason: 'missing' | 'wrong' | 'stale' | 'secret_not_set' };

/** Headers that carry signatures: verified here, never shown to app code. */
export const SIGNATURE_HEADERS = [
  'webhook-signature',
  'x-hub-signature',
  'x-hub-signature-256',
  'stripe-signature',
];

export function verifyWebhook(
  provider: Provider,
  secret: string | undefined,
  body: Buffer,
  headers: Headers,
): Verdict {
  const deliveryId = headers.get('webhook-id') ?? headers.get('x-github-delivery');
  if (provider === 'none') return { ok: true, deliveryId };
  if (!secret) return { ok: false, reason: 'secret_not_set' };
  if (provider === 'generic_hmac') {
    const wh = secret.startsWith('whsec_')
      ? new Webhook(secret)
      : new Webhook(secret, { format: 'raw' });
    try {
      wh.verify(
        body,
        {
          'webhook-id': headers.get('webhook-id') ?? '',
          'webhook-timestamp': headers.get('webhook-timestamp') ?? '',
          'webhook-signature': headers.get('webhook-signature') ?? '',
        },
        { jsonParse: false },
      );
      return { ok: true, deliveryId: headers.get('webhook-id') };
    } catch (err) {
      const msg = err instanceof WebhookVerificationError ? err.message : '';
      if (/Missing required headers/.test(msg)) return { ok: false, reason: 'missing' };
      if (/timestamp too (old|new)/.test(msg)) return { ok: false, reason: 'stale' };
      return { ok: false, reason: 'wrong' };
    }
  }
  const header = headers.get('x-hub-signature-256');
  if (!header) return { ok: false, reason: 'missing' };
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!match) return { ok: false, reason: 'wrong' };
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(match[1]!, 'hex');
  return timingSafeEqual(expected, given)
    ? { ok: true, deliveryId: headers.get('x-github-delivery') }
    : { ok: false, reason: 'wrong' };
}
