/**
 * An app's answer without a Content-Type goes out without one, as Workers and Deno send it (a
 * browser then sniffs it; SvelteKit's `text()` answers bytes with no type). @hono/node-server adds
 * `text/plain; charset=UTF-8` to every such body, so the origin marks the answer and the Node
 * listener's ServerResponse drops the mark and the added type as it writes the head.
 */
import http from 'node:http';

export const UNTYPED = 'x-platform-untyped';

export class UntypedAwareResponse extends http.ServerResponse {
  override writeHead(status: number, ...rest: unknown[]): this {
    const last = rest[rest.length - 1];
    if (last && typeof last === 'object' && !Array.isArray(last) && UNTYPED in last) {
      const headers = last as Record<string, unknown>;
      delete headers[UNTYPED];
      for (const name of Object.keys(headers))
        if (name.toLowerCase() === 'content-type') delete headers[name];
    }
    if (this.hasHeader(UNTYPED)) {
      this.removeHeader(UNTYPED);
      this.removeHeader('content-type');
    }
    return (super.writeHead as (...a: unknown[]) => this)(status, ...rest);
  }
}

/** Deno's server adds no type: only the mark goes. */
export function dropUntypedMark(res: Response): Response {
  if (!res.headers.has(UNTYPED)) return res;
  try {
    res.headers.delete(UNTYPED);
    return res;
  } catch {
    const headers = new Headers(res.headers);
    headers.delete(UNTYPED);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}
