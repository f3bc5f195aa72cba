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
};

/** Node's parsed headers (`IncomingMessage.headers`). */
export type ParsedHeaders = Readonly<Record<string, string | string[] | undefined>>;

class NodeHeaderReads implements HeaderReads {
  constructor(private readonly parsed: ParsedHeaders) {}
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

/** Reads for `req`: from Node's parsed headers when the server passed them, else from the Request. */
export function headerReads(req: Request, parsed: ParsedHeaders | undefined): HeaderReads {
  return parsed ? new NodeHeaderReads(parsed) : req.headers;
}
