import { ApiError, errorBody, type ErrorCode, statusOf } from '../../errors.ts';
import { recordEvents, type NewEvent } from '../../events/record.ts';
import { originJson } from '../respond.ts';
import type { OriginEnv, PlatformRequest } from './env.ts';
import { Hono } from 'hono';
import { readBodyLimited } from '../../http/validate.ts';
import { addAppJob } from '../../jobs/enqueue.ts';
import { flattenResources } from '../../manifest/resources.ts';
import { logEvents } from '../../runtime/log-events.ts';
import { badResponse, scrubRequestHeaders, scrubResponseHeaders } from '../scrub.ts';
import { hit, LIMITS } from '../../abuse/limits.ts';
import { tooDeep } from '../../lib/json.ts';
import { claimDelivery, releaseDelivery } from '../../webhooks/queries.ts';
import { SIGNATURE_HEADERS, verifyWebhook, type Provider } from '../../webhooks/verify.ts';
import { invokeRelease } from '../../runtime/invoke.ts';
import { planOf } from '../../plans/catalogue.ts';

export const MAX_WEBHOOK_BODY = 1024 * 1024;
export const webhookRoutes = new Hono<OriginEnv>({ strict: true }).all('/:name', (c) =>
  deliver(c.env, c.req.raw, c.req.param('name')),
);

async function deliver(services: PlatformRequest, req: Request, name: string): Promise<Response> {
  const { deps, app, release, requestId } = services;
  const spec = flattenResources(release.manifest).find(
    (r) => r.resource_type === 'webhooks' && r.resource_name === name,
  )?.spec as
    | {
        provider: Provider;
        secret: string | null;
        deliver_to: 'server' | 'job';
        job: string | null;
      }
    | undefined;
  if (!spec) return originJson(404, errorBody('not_found', 'Unknown webhook.'), requestId);
  if (req.method !== 'POST')
    return originJson(
      405,
      errorBody('method_not_allowed', 'Webhooks are delivered with POST.'),
      requestId,
      { allow: 'POST' },
    );
  const base = {
    app_id: app.appId,
    account_id: app.accountId,
    release_id: release.releaseId,
    request_id: requestId,
  };
  const reject = async (reason: string, code: ErrorCode, message: string) => {
    await recordEvents(deps.db, [
      {
        ...base,
        type: 'webhook.rejected',
        severity: 'warn',
        message: `Webhook ${name} rejected: ${reason}.`,
        metadata: { webhook_name: name, provider: spec.provider, reason },
      },
    ]);
    return originJson(statusOf(code), errorBody(code, message), requestId);
  };
  const rate = await hit(deps.db, `webhook:app:${app.appId}`, LIMITS.webhookPerApp);
  if (rate.limited) {
    // Counted, not logged one by one: anyone can send these, and each would be an event in the owner's log.
    const throttled = await hit(
      deps.db,
      `webhook-throttled:app:${app.appId}`,
      LIMITS.webhookThrottledSummary,
    );
    if (throttled.hits === 1) {
      const window = LIMITS.webhookThrottledSummary.windowSeconds;
      await recordEvents(deps.db, [
        {
          ...base,
          type: 'webhook.rejected',
          severity: 'warn',
          message: `Webhook deliveries to this app are over the limit (${LIMITS.webhookPerApp.max} per ${LIMITS.webhookPerApp.windowSeconds} s) and are refused with 429; this is logged once a minute (${throttled.previousHits} refused in the minute before).`,
          metadata: {
            webhook_name: name,
            provider: spec.provider,
            reason: 'rate_limited',
            summary_window_seconds: window,
            refused_in_previous_window: throttled.previousHits,
          },
        },
      ]);
    }
    return originJson(
      429,
      errorBody(
        'abuse_throttled',
        `Too many webhook deliveries for this app; retry in ${rate.retryAfterSeconds} seconds.`,
        { retry_after: rate.retryAfterSeconds },
      ),
      requestId,
      { 'retry-after': String(rate.retryAfterSeconds) },
    );
  }
  if (!planOf(deps.config.plans, app.planKey).features.webhooks) {
    return reject(
      'plan_without_webhooks',
      'entitlement_required',
      "This app's plan does not include webhooks.",
    );
  }
  let body: Buffer;
  try {
    body = Buffer.from(
      await readBodyLimited(
        req,
        MAX_WEBHOOK_BODY,
        () => new ApiError('payload_too_large', 'Webhook bodies are limited to 1 MiB.'),
      ),
    );
  } catch (err) {
    if (err instanceof ApiError) return reject('too_large', 'payload_too_large', err.message);
    throw err;
  }
  const secrets = spec.secret ? await services.caches.appSecrets(app.appId) : {};
  const verdict = verifyWebhook(
    spec.provider,
    spec.secret ? secrets[spec.secret] : undefined,
    body,
    req.headers,
  );
  if (!verdict.ok) {
    const messages = {
      missing: 'The signature headers are missing.',
      wrong: 'The signature does not match.',
      stale: 'The signature timestamp is outside the 5-minute tolerance.',
      secret_not_set: 'The webhook secret is not set for this app.',
    };
    return reject(verdict.reason, 'unauthorized', messages[verdict.reason]);
  }

  // Claim the delivery id; released again if delivery fails, so the provider's retry gets through.
  const deliveryId = verdict.deliveryId;
  if (deliveryId) {
    const claimed = await claimDelivery(deps.db, { appId: app.appId, name, deliveryId });
    if (!claimed)
      return originJson(
        200,
        { received: true, duplicate: true, delivery_id: deliveryId },
        requestId,
      );
  }
  const release_claim = async () => {
    if (deliveryId) await releaseDelivery(deps.db, { appId: app.appId, name, deliveryId });
  };

  const text = body.toString('utf8');
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
    // too deep to hand over safely: the handler still gets the raw `body`
    if (tooDeep(parsed)) parsed = null;
  } catch {
    parsed = null;
  }
  const headers = scrubRequestHeaders(req.headers).filter(([n]) => !SIGNATURE_HEADERS.includes(n));
  const event = {
    webhook_name: name,
    provider: spec.provider,
    delivery_id: deliveryId,
    headers: Object.fromEntries(headers),
    body: text,
    json: parsed,
    received_at: new Date().toISOString(),
  };
  const received: NewEvent = {
    ...base,
    type: 'webhook.received',
    message: `Webhook ${name} received.`,
    metadata: {
      webhook_name: name,
      provider: spec.provider,
      delivery_id: deliveryId,
      bytes: body.length,
    },
  };

  if (spec.deliver_to === 'job') {
    const jobs = release.manifest.resources.jobs ?? {};
    const maxAttempts = jobs[spec.job!]?.max_attempts ?? 3;
    const added = await deps.db.transaction().execute(async (trx) => {
      const job = await addAppJob(trx, {
        app_id: app.appId,
        job_name: spec.job!,
        payload: event,
        source: 'webhook',
        maxAttempts,
      });
      await recordEvents(trx, [
        received,
        {
          ...base,
          type: 'webhook.queued',
          message: `Webhook ${name} queued as job ${spec.job}.`,
          metadata: {
            webhook_name: name,
            delivery_id: deliveryId,
            job_id: job.job_id,
            job_name: spec.job,
          },
        },
        {
          ...base,
          type: 'job.enqueued',
          message: `Job ${spec.job} enqueued.`,
          metadata: {
            job_id: job.job_id,
            job_name: spec.job,
            run_at: job.run_at,
            max_attempts: maxAttempts,
            source: 'webhook',
          },
        },
      ]);
      return job;
    });
    return originJson(202, { received: true, queued: true, job_id: added.job_id }, requestId);
  }

  const entry = release.manifest.runtime.server_entry;
  const result = entry
    ? await invokeRelease(deps, services, {
        handler: 'webhook',
        app,
        release,
        requestId,
        event: JSON.stringify(event),
        request: { method: 'POST', url: req.url, headers: [] },
      })
    : {
        ok: false,
        error: { kind: 'no-handler' as const, message: 'the release has no server_entry' },
      };
  const events: NewEvent[] = [
    received,
    ...logEvents(base, 'logs' in result ? result.logs : undefined),
  ];
  const problem = result.ok && result.response ? badResponse(result.response) : null;
  if (result.ok && result.response && !problem && result.response.status < 500) {
    events.push({
      ...base,
      type: 'webhook.delivered',
      message: `Webhook ${name} delivered.`,
      metadata: { webhook_name: name, delivery_id: deliveryId, status: result.response.status },
    });
    await recordEvents(deps.db, events);
    return new Response(result.response.text ?? result.response.body ?? null, {
      status: result.response.status,
      headers: scrubResponseHeaders(result.response.headers, requestId),
    });
  }
  await release_claim();
  const missing = !result.ok && result.error?.kind === 'no-handler';
  events.push({
    ...base,
    type: missing ? 'webhook.handler_missing' : 'webhook.delivery_failed',
    severity: 'error',
    message: missing
      ? `Webhook ${name} has no webhook() handler to deliver to.`
      : `Webhook ${name} delivery failed.`,
    metadata: {
      webhook_name: name,
      delivery_id: deliveryId,
      kind: problem ?? (result.ok ? 'status_5xx' : result.error?.kind),
      error: result.ok ? null : (result.error?.message ?? null),
    },
  });
  await recordEvents(deps.db, events);
  return originJson(
    500,
    errorBody('runtime_error', 'The app could not handle this webhook.'),
    requestId,
  );
}
