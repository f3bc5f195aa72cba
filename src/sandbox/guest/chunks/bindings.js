// Workers bindings over the platform's stores: a KV namespace (`env.CACHE`) with the API and the
// TypeErrors of Workers' own binding. What needs the store (limits, expirations, lists) is checked
// by the platform (src/bindings/kv.ts), whose refusals arrive worded as Workers word them.

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The most of a streamed value read in: one byte past KV's 25 MiB, so the platform can say how far over it is. */
const MAX_STREAMED = 25 * 1024 * 1024 + 1;
const TYPES = ['text', 'arrayBuffer', 'json', 'stream'];

/** KV's refusals reach app code as plain Errors, as Workers throw them; anything else stays a PlatformError. */
const asKvError = (e) => {
  if (e && (e.code === 'invalid_request' || e.code === 'payload_too_large'))
    throw new Error(e.message);
  throw e;
};

const keyOf = (key) => {
  const k = String(key);
  if (k === '') throw new TypeError('Key name cannot be empty.');
  if (k === '.' || k === '..') throw new TypeError(`"${k}" is not allowed as a key name.`);
  return k;
};

const typeOf = (options) => {
  const type = typeof options === 'string' ? options : (options?.type ?? 'text');
  if (!TYPES.includes(type))
    throw new TypeError(
      'Unknown response type. Possible types are "text", "arrayBuffer", "json", and "stream".',
    );
  return type;
};

/** As Workers convert an expiration: a number (NaN as 0) in 32-bit range, or a TypeError. */
const int32 = (v) => {
  if (v === undefined || v === null) return undefined;
  const n = Number(v);
  if (Number.isNaN(n)) return 0;
  if (n < -2147483648 || n > 2147483647)
    throw new TypeError(
      'Value out of range. Must be between -2147483648 and 2147483647 (inclusive).',
    );
  return Math.trunc(n);
};

const decode = (bytes, type) => {
  if (type === 'arrayBuffer') return bytes;
  if (type === 'stream')
    return new ReadableStream({
      type: 'bytes',
      start(c) {
        if (bytes.byteLength) c.enqueue(new Uint8Array(bytes));
        c.close();
      },
    });
  const text = decoder.decode(bytes);
  return type === 'json' ? JSON.parse(text) : text;
};

async function readStream(stream) {
  const reader = stream.getReader();
  const parts = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = value instanceof Uint8Array ? value : new Uint8Array(value);
    parts.push(chunk);
    size += chunk.byteLength;
    if (size >= MAX_STREAMED) {
      await reader.cancel();
      break;
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out.buffer;
}

/** A put's value as bytes, as Workers take it: strings, buffers, views and streams; other objects refused. */
async function valueBytes(value) {
  if (typeof value === 'string') return encoder.encode(value).buffer;
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value))
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  if (value instanceof ReadableStream) return readStream(value);
  if (value !== null && (typeof value === 'object' || typeof value === 'function'))
    throw new TypeError(
      'KV put() accepts only strings, ArrayBuffers, ArrayBufferViews, and ReadableStreams as values.',
    );
  return encoder.encode(String(value)).buffer;
}

function kvNamespace(call, name) {
  const one = async (key, options, withMetadata) => {
    const k = keyOf(key);
    const type = typeOf(options);
    const cacheTtl = typeof options === 'object' ? options?.cacheTtl : undefined;
    const got = await call('kv.get', [name, k, { cacheTtl }]).catch(asKvError);
    if (!withMetadata) return got === null ? null : decode(got.bytes, type);
    if (got === null) return { value: null, metadata: null, cacheStatus: null };
    return {
      value: decode(got.bytes, type),
      metadata: got.value.metadata ?? null,
      cacheStatus: null,
    };
  };
  const many = async (keys, options, withMetadata) => {
    const list = keys.map(keyOf);
    const type = typeof options === 'string' ? options : (options?.type ?? 'text');
    const cacheTtl = typeof options === 'object' ? options?.cacheTtl : undefined;
    const got = await call('kv.getBulk', [name, list, { type, cacheTtl }]).catch(asKvError);
    const out = new Map();
    for (const k of list) {
      const e = got[k];
      if (!e) out.set(k, null);
      else {
        const value = type === 'json' ? JSON.parse(e.value) : e.value;
        out.set(k, withMetadata ? { value, metadata: e.metadata ?? null } : value);
      }
    }
    return out;
  };
  return Object.freeze({
    get(key, options) {
      return Array.isArray(key) ? many(key, options, false) : one(key, options, false);
    },
    getWithMetadata(key, options) {
      return Array.isArray(key) ? many(key, options, true) : one(key, options, true);
    },
    async put(key, value, options) {
      const k = keyOf(key);
      const opts = {
        expiration: int32(options?.expiration),
        expirationTtl: int32(options?.expirationTtl),
        metadata: options?.metadata === undefined ? undefined : JSON.stringify(options.metadata),
      };
      const bytes = await valueBytes(value);
      await call('kv.put', [name, k, opts], bytes).catch(asKvError);
    },
    async delete(key) {
      const k = keyOf(key);
      await call('kv.delete', [name, k]).catch(asKvError);
    },
    async list(options) {
      const opts = {
        prefix: options?.prefix ?? undefined,
        limit: options?.limit ? options.limit : undefined,
        cursor: options?.cursor ?? undefined,
      };
      const r = await call('kv.list', [name, opts]).catch(asKvError);
      return { ...r, cacheStatus: null };
    },
  });
}

/** @param {{ provide: (name: string, value: unknown) => void, internals: Record<string, any> }} platform */
export default function install(platform) {
  const call = platform.internals.hostCall;
  platform.provide('bindings', (spec) => {
    const env = {};
    for (const [binding, b] of Object.entries(spec))
      if (b.type === 'kv') env[binding] = kvNamespace(call, b.name);
    return env;
  });
}
