/**
 * What app origins add under `platform dev` (`PLATFORM_DEV_MODE=1`, set only by its local service):
 * a page a browser opens reloads itself when a new release goes live, and a thrown error answers a
 * browser with a page showing the error and its source-mapped stack. A server started any other way
 * never does either, so a visitor of a real app sees the generic error body the contract fixes.
 */
import type { Deps } from '../deps.ts';
import { REQUEST_ID_HEADER } from '../http/request-id.ts';
import type { RuntimeCaches } from '../releases/live.ts';

export const DEV_PATH = '/_platform/dev/';

/** Reloads the page when `/_platform/dev/changes` says another release is live (EventSource reconnects by itself). */
const RELOAD_JS = `(() => {
  const release = document.currentScript && document.currentScript.dataset.release;
  if (!release || typeof EventSource !== 'function') return;
  const changes = new EventSource('/_platform/dev/changes?release=' + encodeURIComponent(release));
  changes.addEventListener('release', () => { changes.close(); location.reload(); });
})();
`;

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

/** A request a browser makes to show the answer as a page (not a fetch from the page's code). */
export function isDocumentRequest(req: Request): boolean {
  const dest = req.headers.get('sec-fetch-dest');
  return req.method === 'GET' && (dest === 'document' || dest === 'iframe');
}

const tag = (releaseId: string) =>
  `<script src="/_platform/dev/reload.js" data-release="${escapeHtml(releaseId)}" defer></script>`;

/** The page for a failed server call under `platform dev`: what failed, the stack, where to look. */
export function devErrorPage(input: {
  status: number;
  summary: string;
  error: string | null;
  stack: string | null;
  method: string;
  path: string;
  releaseId: string;
  requestId: string;
}): Response {
  // the app's own frames, one per line (the platform's prelude frames say nothing about the app)
  const frames = (input.stack ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.includes('<platform prelude>'));
  const stack = frames.length
    ? `<pre>${escapeHtml(frames.join('\n'))}</pre>`
    : '<p class="muted">No stack was recorded for this failure.</p>';
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(input.error ?? input.summary)}</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:6vh auto;padding:0 1rem;color:#1d2430}h1{font-size:1.3rem;color:#b42318;margin-bottom:.25rem}pre{background:#eef1f5;padding:1rem;border-radius:6px;overflow:auto;font-size:13px;line-height:1.45}code{background:#eef1f5;padding:.1em .3em;border-radius:4px}.muted{color:#5b6473}@media (prefers-color-scheme:dark){body{background:#12151b;color:#e7eaf0}pre,code{background:#232935}h1{color:#ff8a80}.muted{color:#a3abb8}}</style></head><body><p class="muted">${escapeHtml(input.method)} ${escapeHtml(input.path)} → ${input.status}</p><h1>${escapeHtml(input.error ?? input.summary)}</h1><p>${escapeHtml(input.summary)}</p>${stack}<p class="muted">Release <code>${escapeHtml(input.releaseId)}</code> · request <code>${escapeHtml(input.requestId)}</code>. This page is shown by <code>platform dev</code> only; a published app answers a visitor with the generic error, and the stack is in its events. Save a fix and this page reloads.</p></body></html>`;
  return new Response(body, {
    status: input.status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; base-uri 'none'",
      [REQUEST_ID_HEADER]: input.requestId,
    },
  });
}

export type DevMode = ReturnType<typeof createDevMode>;

export function createDevMode(deps: Pick<Deps, 'signals'>, caches: RuntimeCaches) {
  type Watcher = { appId: string; release: string; send(id: string): void; end(): void };
  const watchers = new Set<Watcher>();
  const encoder = new TextEncoder();

  deps.signals.onAppChanged((appId) => {
    if (![...watchers].some((w) => w.appId === appId)) return;
    void caches.liveApp(appId).then(
      (app) => {
        for (const w of watchers)
          if (w.appId === appId && app && app.releaseId !== w.release) w.send(app.releaseId);
      },
      () => {},
    );
  });

  /** `text/event-stream`: an event `release` when the live release is not the one the page was served from. */
  async function changes(req: Request, appId: string, requestId: string): Promise<Response> {
    const release = new URL(req.url).searchParams.get('release') ?? '';
    const current = (await caches.liveApp(appId))?.releaseId;
    let watcher: Watcher | undefined;
    let ping: ReturnType<typeof setInterval> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const write = (s: string) => {
          try {
            controller.enqueue(encoder.encode(s));
          } catch {
            // the page went away
          }
        };
        const end = () => {
          clearInterval(ping);
          if (watcher) watchers.delete(watcher);
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        watcher = {
          appId,
          release,
          send: (id) => {
            write(`event: release\ndata: ${id}\n\n`);
            end();
          },
          end,
        };
        // reconnect quickly when `platform dev` restarts
        write('retry: 500\n\n');
        if (current && current !== release) return watcher.send(current);
        watchers.add(watcher);
        ping = setInterval(() => write(': ping\n\n'), 15_000);
      },
      cancel() {
        clearInterval(ping);
        if (watcher) watchers.delete(watcher);
      },
    });
    return new Response(stream, {
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        [REQUEST_ID_HEADER]: requestId,
      },
    });
  }

  /** `/_platform/dev/*`: the reload script and its event stream. */
  function answer(req: Request, pathname: string, appId: string, requestId: string) {
    if (pathname === `${DEV_PATH}reload.js`)
      return new Response(RELOAD_JS, {
        headers: {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'no-store',
          [REQUEST_ID_HEADER]: requestId,
        },
      });
    if (pathname === `${DEV_PATH}changes`) return changes(req, appId, requestId);
    return undefined;
  }

  /**
   * A browser's document request as the origin will answer it under dev mode: without
   * `Accept-Encoding` (the page is rewritten on its way out) and without validators (no 304 for a
   * page whose reload script may have changed).
   */
  function documentRequest(req: Request): Request {
    const headers = new Headers(req.headers);
    for (const h of ['accept-encoding', 'if-none-match', 'if-modified-since']) headers.delete(h);
    return new Request(req.url, { method: req.method, headers });
  }

  /** An HTML page with the reload script added after it (browsers run a script after `</html>`). */
  function decorate(res: Response, releaseId: string): Response {
    const type = res.headers.get('content-type') ?? '';
    if (!/^text\/html/i.test(type) || !res.body || res.headers.has('content-encoding')) return res;
    const script = encoder.encode(tag(releaseId));
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        flush(controller) {
          controller.enqueue(script);
        },
      }),
    );
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    headers.delete('etag');
    headers.set('cache-control', 'no-store');
    return new Response(body, { status: res.status, statusText: res.statusText, headers });
  }

  return {
    answer,
    documentRequest,
    decorate,
    /** Ends every open event stream (the service is stopping: they would hold its HTTP server open). */
    close() {
      for (const w of [...watchers]) w.end();
    },
  };
}
