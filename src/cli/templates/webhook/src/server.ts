/**
 * POST /_platform/webhooks/incoming is verified by the platform (Standard Webhooks signatures with
 * WEBHOOK_SECRET), de-duplicated, answered 202, and queued as the `handle-delivery` job, which
 * stores it in `deliveries`. `fetch` serves the stored deliveries as JSON.
 */
type Delivery = { delivery_id: string; event_type: string; payload: unknown; received_at: string };
type WebhookEvent = {
  webhook_name: string;
  delivery_id: string;
  json: unknown;
  received_at: string;
};
type Ctx = {
  data: {
    collection(name: 'deliveries'): {
      create(f: Delivery): Promise<Delivery & { id: string }>;
      list(o?: {
        where?: Partial<Delivery>;
        limit?: number;
      }): Promise<(Delivery & { id: string })[]>;
    };
  };
  log: { info(message: string, metadata?: Record<string, unknown>): void };
};

export default {
  async fetch(request: Request, ctx: Ctx): Promise<Response> {
    if (new URL(request.url).pathname !== '/api/deliveries')
      return Response.json({ error: 'not found' }, { status: 404 });
    const rows = await ctx.data.collection('deliveries').list({ limit: 100 });
    return Response.json({ deliveries: rows.reverse() });
  },

  async job(event: { job_name: string; payload: WebhookEvent }, ctx: Ctx): Promise<void> {
    if (event.job_name !== 'handle-delivery') return;
    const hook = event.payload;
    const deliveries = ctx.data.collection('deliveries');
    // a retried job must not store a delivery twice
    if ((await deliveries.list({ where: { delivery_id: hook.delivery_id }, limit: 1 })).length)
      return;
    const json = hook.json as { type?: unknown } | null;
    const row = await deliveries.create({
      delivery_id: hook.delivery_id,
      event_type: typeof json?.type === 'string' ? json.type : 'unknown',
      payload: json,
      received_at: hook.received_at,
    });
    ctx.log.info('delivery stored', { id: row.id, event_type: row.event_type });
  },
};
