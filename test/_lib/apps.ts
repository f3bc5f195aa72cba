/** Publishing server apps and reading what they did, shared by the runtime and jobs suites. */
import * as assert from 'uvu/assert';
import { file, site } from './bundles.ts';
import type { Harness } from './harness.ts';
import type { EventSummary } from '../../src/events/schemas.ts';

export type ServerApp = { appId: string; host: string; releaseId: string };

/**
 * Publishes an app whose `server.js` is `source` (static root `public/` with an index page whose
 * text is `index`, or with no index page when it is null, so the server answers `/`) and asserts
 * it went live.
 */
export async function publishServerApp(
  h: Harness,
  key: string,
  source: string,
  extra: { index?: string | null; files?: ReturnType<typeof file>[]; resources?: unknown } = {},
): Promise<ServerApp> {
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      extra.index === null
        ? file('public/robots.txt', 'User-agent: *\n')
        : file('public/index.html', extra.index ?? 'static'),
      file('server.js', source, 'text/javascript'),
      ...(extra.files ?? []),
    ],
    ...(extra.resources ? { resources: extra.resources } : {}),
  });
  const r = await h.call('PUT', '/v0/apps', { key, body });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.activation?.status, 'live', r.text);
  return {
    appId: r.body.app_id as string,
    host: `${r.body.app_id}.apps.localhost`,
    releaseId: r.body.release_id as string,
  };
}

/** An event as the API lists it; `metadata` is free-form per event type, so tests read its fields loosely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ListedEvent = Omit<EventSummary, 'metadata'> & { metadata: Record<string, any> };

/** An app's events of one type, newest first, as the API lists them. */
export async function eventsOf(
  h: Harness,
  key: string,
  appId: string,
  type: string,
): Promise<ListedEvent[]> {
  return (
    await h.api('GET /v0/apps/{app_id}/events', {
      key,
      params: { app_id: appId },
      query: { type, limit: '100' },
    })
  ).events;
}

/** Polls `fn` every 50 ms until it returns something truthy (then returns it), or throws after `ms`. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  ms = 10_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type AppAnswer = {
  status: number;
  json: any;
  text: string;
  headers: Headers;
  appId: string;
};

/**
 * Publishes a server module and calls it once on its origin. A failure's message is in the owner's
 * events, so it is appended to `text`, where an assertion's message shows it.
 */
export async function callNewApp(
  h: Harness,
  key: string,
  source: string,
  init: {
    path?: string;
    method?: string;
    rawBody?: BodyInit;
    headers?: Record<string, string>;
  } = {},
): Promise<AppAnswer> {
  const app = await publishServerApp(h, key, source);
  const r = await h.call(init.method ?? 'GET', init.path ?? '/run', {
    host: app.host,
    rawBody: init.rawBody,
    headers: init.headers,
  });
  const error =
    r.status >= 500
      ? (await eventsOf(h, key, app.appId, 'runtime.request_error'))[0]?.metadata.error
      : undefined;
  return {
    status: r.status,
    json: r.body,
    text: error ? `${r.text} ${error}` : r.text,
    headers: r.headers,
    appId: app.appId,
  };
}
