/**
 * The host functions for text, URLs, encodings, randomness and hashes: functions of their arguments
 * alone (no call, no instance state), backed by Node's own URL, UTF-8, base64 and crypto. Strings
 * that may hold NUL cross as described in host-api.ts.
 */
import { createHash, createHmac, getHashes, randomBytes, randomUUID } from 'node:crypto';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';
import type { HostApi, UrlParts } from './host-api.ts';
import { decodeGuestBytes, newGuestString, utf8OfGuestString } from './fast-calls.ts';

export type HostFunction = (...args: QuickJSHandle[]) => QuickJSHandle | undefined;

type TextName =
  | 'utf8Encode'
  | 'utf8EncodeJson'
  | 'utf8Decode'
  | 'urlParse'
  | 'urlSet'
  | 'qsParse'
  | 'qsStringify'
  | 'atob'
  | 'btoa'
  | 'randomBytes'
  | 'randomUUID'
  | 'hash'
  | 'b64encode';

/** TextDecoders by `fatal * 2 + ignoreBOM`. */
const decoders = [false, true].flatMap((fatal) =>
  [false, true].map((ignoreBOM) => new TextDecoder('utf-8', { fatal, ignoreBOM })),
);

/** What node:crypto's createHash and createHmac take here: Node's own list. */
const HASHES = new Set(getHashes().map((h) => h.toLowerCase()));

/** A URL's parts in the prelude's `URL_PARTS` order, joined by U+0001 (see `HostApi.urlParse`). */
function urlParts(u: URL): string {
  const parts: UrlParts = u;
  return `${parts.href}\u0001${parts.origin}\u0001${parts.protocol}\u0001${parts.username}\u0001${parts.password}\u0001${parts.host}\u0001${parts.hostname}\u0001${parts.port}\u0001${parts.pathname}\u0001${parts.search}\u0001${parts.hash}`;
}

/** A guest array `[text, ArrayBuffer]`: a host answer's JSON meta and its bytes; the caller owns it. */
export function newTextBytesPair(
  ctx: QuickJSContext,
  text: string,
  bytes: ArrayBuffer,
): QuickJSHandle {
  const pair = ctx.newArray();
  using meta = ctx.newString(text);
  using body = ctx.newArrayBuffer(bytes);
  ctx.setProp(pair, 0, meta);
  ctx.setProp(pair, 1, body);
  return pair;
}

/** Reading guest values and making them, as every host function does. */
export function guestValues(ctx: QuickJSContext) {
  /** A string the prelude sent through `wire()`: JSON behind U+0002 where a C string could not carry it. */
  const text = (h: QuickJSHandle) => {
    const s = ctx.getString(h);
    return s.charCodeAt(0) === 2 ? (JSON.parse(s.slice(1)) as string) : s;
  };
  return {
    text,
    str: (h: QuickJSHandle | undefined) =>
      h === undefined ? undefined : ctx.typeof(h) === 'undefined' ? undefined : text(h),
    bytes: (h: QuickJSHandle) => {
      using lt = ctx.getArrayBuffer(h);
      return Buffer.from(lt.value);
    },
    arrayBuffer: (b: Buffer) =>
      ctx.newArrayBuffer(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)),
    json: (v: unknown) => ctx.newString(JSON.stringify(v)),
  };
}

export function textFunctions(ctx: QuickJSContext): {
  [K in TextName & keyof HostApi]: HostFunction;
} {
  const { text, str, bytes, arrayBuffer, json } = guestValues(ctx);
  const withUrl = (make: () => URL) => {
    try {
      return ctx.newString(urlParts(make()));
    } catch {
      return ctx.undefined;
    }
  };
  return {
    // a string without NUL as it is; one with a NUL as JSON (a C string would end there)
    utf8Encode: (s) => utf8OfGuestString(ctx, s),
    utf8EncodeJson: (s) => arrayBuffer(Buffer.from(JSON.parse(ctx.getString(s)) as string, 'utf8')),
    // the text as it is, or as JSON behind U+0002 where a C string could not carry it (see `wire`)
    utf8Decode: (ab, fatal, ignoreBom) => {
      const f = ctx.dump(fatal) === true;
      const b = ctx.dump(ignoreBom) === true;
      const s = decodeGuestBytes(ctx, ab, decoders[(f ? 2 : 0) + (b ? 1 : 0)]!);
      return s.includes('\0') || s.charCodeAt(0) === 2
        ? newGuestString(ctx, `\u0002${JSON.stringify(s)}`)
        : newGuestString(ctx, s);
    },
    urlParse: (href, base) => {
      const b = str(base);
      return withUrl(() => (b === undefined ? new URL(text(href)) : new URL(text(href), b)));
    },
    urlSet: (href, part, value) => {
      const u = new URL(ctx.getString(href));
      return withUrl(() => {
        u[ctx.getString(part) as 'href'] = text(value);
        return u;
      });
    },
    qsParse: (s) => json([...new URLSearchParams(text(s))]),
    qsStringify: (s) =>
      ctx.newString(
        new URLSearchParams(JSON.parse(ctx.getString(s)) as [string, string][]).toString(),
      ),
    // HTML's forgiving-base64 decode, step by step; null: not base64 (the guest throws InvalidCharacterError)
    atob: (s) => {
      let input = text(s).replace(/[\t\n\f\r ]/g, '');
      if (input.length % 4 === 0) input = input.replace(/==?$/, '');
      if (input.length % 4 === 1 || !/^[A-Za-z0-9+/]*$/.test(input)) return json(null);
      return json(Buffer.from(input, 'base64').toString('latin1'));
    },
    // undefined: a character outside Latin-1 (the guest throws InvalidCharacterError)
    btoa: (s) => {
      const input = JSON.parse(ctx.getString(s)) as string;
      if (/[^\u0000-\u00ff]/.test(input)) return ctx.undefined;
      return ctx.newString(Buffer.from(input, 'latin1').toString('base64'));
    },
    randomBytes: (n) => arrayBuffer(randomBytes(Math.min(65536, Math.max(0, ctx.getNumber(n))))),
    randomUUID: () => ctx.newString(randomUUID()),
    hash: (alg, ab, key) => {
      const algorithm = text(alg).toLowerCase();
      if (!HASHES.has(algorithm)) return ctx.undefined;
      const h =
        key === undefined || ctx.typeof(key) === 'undefined'
          ? createHash(algorithm)
          : createHmac(algorithm, bytes(key));
      return arrayBuffer(h.update(bytes(ab)).digest());
    },
    b64encode: (ab) => ctx.newString(bytes(ab).toString('base64')),
  };
}
