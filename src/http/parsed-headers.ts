/**
 * Request header reads for the app origin's hot path. On Node the server hands over the request's
 * `IncomingMessage` beside the `Request`; its `headers` object is what Node's HTTP parser already
 * made of the request (names lowercased, values validated by the parser and trimmed, repeats
 * joined). Reading it costs a property load, where the adapter's `Request.headers.get()` validates
 * the name and lowercases it and checks the value again on every call (~1,000 instructions each,
 * five reads per static hit), and listing them all (what app code is handed) makes the adapter
 * build a whole `Headers` first. Elsewhere (Deno) the `Request`'s own headers are read.
 */

/** What the hot path needs of request headers: reads by lowercase name, and every header once. `Headers` is one. */
export type HeaderReads = {
  get(name: string): string | null;
  /** Each header name (lowercase) once, with its value; the order is not defined. */
  forEach(each: (value: string, name: string) => void): void;
  /**
   * The body as Node's own stream, where the server has it: read from it, the adapter never wraps
   * the request in a web `ReadableStream` (and a whole `Request` with its `AbortSignal`), which is
   * most of the main thread's cost of a large body (`npm run bench:real`, the JSON POST).
   */
  readonly nodeBody?: AsyncIterable<Uint8Array>;
};

/** Node's parsed headers (`IncomingMessage.headers`). */
export type ParsedHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What the app origin takes of Node's `IncomingMessage`: the peer, the parsed headers, the body's bytes. */
export type NodeIncoming = AsyncIterable<Uint8Array> & {
  readonly socket?: { readonly remoteAddress?: string } | null;
  readonly headers?: ParsedHeaders;
};

class NodeHeaderReads implements HeaderReads {
  private readonly parsed: ParsedHeaders;
  readonly nodeBody: AsyncIterable<Uint8Array>;
  constructor(parsed: ParsedHeaders, nodeBody: AsyncIterable<Uint8Array>) {
    this.parsed = parsed;
    this.nodeBody = nodeBody;
  }
  /** `name` must be lowercase (every caller passes a literal). */
  get(name: string): string | null {
    const v = this.parsed[name];
    // only set-cookie is an array in Node's object, and requests do not carry it; joined as Headers would
    return v === undefined ? null : typeof v === 'string' ? v : v.join(', ');
  }
  forEach(each: (value: string, name: string) => void): void {
    const parsed = this.parsed;
    for (const name of Object.keys(parsed)) {
      if (name.charCodeAt(0) === 58) continue; // HTTP/2 pseudo-headers (`:path`) are not headers
      const v = parsed[name];
      if (v !== undefined) each(typeof v === 'string' ? v : v.join(', '), name);
    }
  }
}

/** Reads for `req`: from Node's request when the server passed it, else from the Request. */
export function headerReads(req: Request, incoming: NodeIncoming | undefined): HeaderReads {
  return incoming?.headers ? new NodeHeaderReads(incoming.headers, incoming) : req.headers;
}
