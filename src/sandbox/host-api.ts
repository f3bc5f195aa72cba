/**
 * The functions the worker installs as `__host` for the prelude, with the signatures the prelude
 * sees. One table for both sides: `host-functions.ts` must implement exactly these names (its
 * table is typed by this one) and the prelude (`guest/prelude/`) is type-checked against it (`// @ts-check`).
 * Strings that may hold NUL cross as JSON text, since QuickJS C strings end at the first NUL:
 * either always (named `json`), or, for the URL and query parsers, `atob`, `secret` and `log`'s message,
 * only when they hold a NUL or a lone surrogate (the prelude's `wire()`: JSON behind U+0002; the
 * host's `text()` reads both).
 */
export type HostApi = {
  /** UTF-8 bytes of a string without NUL (a lone surrogate becomes U+FFFD). */
  utf8Encode(s: string): ArrayBuffer;
  /** UTF-8 bytes of a string given as JSON text (one holding a NUL). */
  utf8EncodeJson(json: string): ArrayBuffer;
  /**
   * The string the bytes decode to, as it is, or as JSON behind U+0002 when it holds a NUL or starts
   * with U+0002; throws a TypeError when `fatal` and invalid.
   */
  utf8Decode(bytes: ArrayBuffer, fatal: boolean, ignoreBOM: boolean): string;
  /**
   * The parts of a URL in `URL_PARTS` order joined by U+0001 (a parsed URL never holds a raw
   * control character: the parser percent-encodes them or strips them; NUL itself cannot cross,
   * strings enter QuickJS as C strings; one string to split is much cheaper for QuickJS than JSON
   * to parse), or undefined when it does not parse.
   */
  urlParse(href: string, base?: string): string | undefined;
  /** The URL with one part set (as `urlParse` gives it), or undefined when the value is refused. */
  urlSet(href: string, part: string, value: string): string | undefined;
  /** A query string's pairs as JSON `[name, value][]`. */
  qsParse(query: string): string;
  /** JSON `[name, value][]` as a query string. */
  qsStringify(pairsJson: string): string;
  /** Base64 to a Latin-1 string (as JSON text), by HTML's forgiving-base64 decode; `null` (as JSON) when it is not base64. */
  atob(base64: string): string;
  /** A Latin-1 string given as JSON text to base64; undefined for characters above U+00FF. */
  btoa(json: string): string | undefined;
  randomBytes(n: number): ArrayBuffer;
  /** Node's createHash(algorithm) over the bytes, or createHmac(algorithm, key) when a key is given; undefined for an algorithm Node does not have. */
  hash(algorithm: string, bytes: ArrayBuffer, key?: ArrayBuffer): ArrayBuffer | undefined;
  randomUUID(): string;
  b64encode(bytes: ArrayBuffer): string;
  /** Monotonic milliseconds. */
  now(): number;
  /** A secret's value as JSON text, or undefined when the app has none by that name. */
  secret(name: string): string | undefined;
  /** `ctx.log.<level>(message, metadata)`; metadata as JSON text. */
  log(level: string, message: string, metadata?: string): void;
  /** `console.<level>(...parts)`; parts as JSON text. */
  console(level: string, partsJson: string): void;
  setTimer(id: number, ms: number): void;
  clearTimer(id: number): void;
  /**
   * An outbound request (`OutboundRequest` as JSON, the body as bytes) carried out by the worker;
   * settles with the response's head as JSON (`body`: whether there is one to read with `fetchRead`).
   * `id` names it for `fetchRead` and `fetchAbort`.
   */
  fetch(id: number, requestJson: string, body?: ArrayBuffer): Promise<string>;
  /** The next chunk of a fetched response's body (`whole`: all the rest, at most 10 MiB): settles with [`{"done"}` JSON, bytes]. */
  fetchRead(id: number, whole: boolean): Promise<[string, ArrayBuffer]>;
  /**
   * A `crypto.subtle` method run by Node's Web Crypto: args as JSON (bytes `{$b64}`, keys `{$key}`);
   * [result JSON, bytes], at once for an operation of microseconds (subtle.ts `runSubtleNow`), else a promise of it.
   */
  subtle(method: string, argsJson: string): Promise<[string, ArrayBuffer]> | [string, ArrayBuffer];
  /** No CryptoKey of app code carries this key id any more (the guest's FinalizationRegistry saw the last go): the host forgets the key. */
  subtleRelease(id: number): void;
  /** An Intl request (kind, locales, options, method, args as JSON) answered by Node's ICU: `{value}` or `{error}` as JSON. */
  intl(requestJson: string): string;
  /** Aborts an outbound request begun with `fetch`. */
  fetchAbort(id: number): void;
  /** A platform chunk's install function (guest/chunks/<name>.js), evaluated now; not billed to the app. */
  loadChunk(name: string): (platform: ChunkPlatform) => void;
  /**
   * An asynchronous platform call (data, files, jobs) answered by the main thread: JSON in, JSON out.
   * A file upload's (or a cached response's) bytes come beside the JSON, as an ArrayBuffer
   * (`files.upload` and `cache.put` only).
   */
  call(method: string, argsJson: string, bytes?: ArrayBuffer): Promise<string>;
};

export type UrlParts = {
  href: string;
  origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  hash: string;
};

/** What the prelude hands a chunk's install function. */
export type ChunkPlatform = {
  define(name: string, value: unknown): void;
  load(chunk: string): void;
  /** the prelude's `crypto` object (the subtle chunk gives it `subtle` and the Crypto prototype) */
  crypto: object;
  subtle: HostApi['subtle'];
  subtleRelease: HostApi['subtleRelease'];
  b64encode: HostApi['b64encode'];
  intl: HostApi['intl'];
  /** the prelude's own helpers and classes, for the chunks that are parts of it (fetch, text) */
  internals: Record<string, unknown>;
  /** what a chunk hands back to the prelude (`subtle`: the SubtleCrypto instance) */
  provide(name: string, value: unknown): void;
};
