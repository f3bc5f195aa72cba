// Workers bindings over the platform's stores: a KV namespace (`env.CACHE`) and a queue producer
// (`env.QUEUE.send`) with the API and the TypeErrors of Workers' own bindings, and the
// `MessageBatch` a `queue(batch, env, ctx)` consumer gets. What needs the store (limits,
// expirations, lists) is checked by the platform (src/bindings/), whose refusals arrive worded as
// Workers word them.
import { deserialize, serialize } from '@ungap/structured-clone';

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

// named as workerd names its bindings' classes: apps find bindings by `constructor.name`
// (R2-Explorer lists env's R2Buckets so)
class KvNamespace {}
class WorkerQueue {}
/** A binding's methods on an object of its Workers class, frozen. */
const bindingOf = (Class, methods) =>
  Object.freeze(Object.setPrototypeOf(methods, Class.prototype));

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
  return bindingOf(KvNamespace, {
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

// ---- Queues ---------------------------------------------------------------------------------
const CONTENT_TYPES = ['text', 'json', 'bytes', 'v8'];

const toBase64 = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
};
const fromBase64 = (b64) => {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out.buffer;
};

/** A message body as it is stored: its encoded text and its size in bytes as Workers count it. */
function encodeBody(body, contentType) {
  // json unless said otherwise, as Workers default it at the compatibility dates apps are made with
  const type = contentType === undefined ? 'json' : contentType;
  if (!CONTENT_TYPES.includes(type))
    throw new TypeError(`Unsupported queue message content type: ${String(type)}`);
  if (type === 'text') {
    if (typeof body !== 'string')
      throw new TypeError(
        `Content Type "text" requires a value of type string, but received: ${typeof body}`,
      );
    return { contentType: type, body, size: encoder.encode(body).byteLength };
  }
  if (type === 'bytes') {
    if (!(body instanceof ArrayBuffer) && !ArrayBuffer.isView(body))
      throw new TypeError(
        `Content Type "bytes" requires a value of type ArrayBuffer or ArrayBufferView, but received: ${typeof body}`,
      );
    const bytes =
      body instanceof ArrayBuffer
        ? new Uint8Array(body)
        : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    return { contentType: type, body: toBase64(bytes), size: bytes.byteLength };
  }
  if (type === 'json') {
    const text = JSON.stringify(body);
    return { contentType: type, body: text, size: encoder.encode(text).byteLength };
  }
  const text = JSON.stringify(serialize(body, { lossy: false }));
  return { contentType: type, body: text, size: encoder.encode(text).byteLength };
}

function decodeBody(m) {
  if (m.contentType === 'text') return m.body;
  if (m.contentType === 'json') return JSON.parse(m.body);
  if (m.contentType === 'bytes') return fromBase64(m.body);
  return deserialize(JSON.parse(m.body));
}

function queueProducer(call, name) {
  // the platform's refusals read as Workers': "Queue send failed: message length of …"
  const send = (op, messages, options) =>
    call('queue.send', [name, messages, options || {}]).catch((e) => {
      if (e && e.code === 'invalid_request') throw new Error(`Queue ${op} failed: ${e.message}`);
      throw e;
    });
  return bindingOf(WorkerQueue, {
    async send(body, options) {
      const m = encodeBody(body, options?.contentType);
      if (options?.delaySeconds !== undefined) m.delaySeconds = options.delaySeconds;
      return send('send', [m]);
    },
    async sendBatch(messages, options) {
      const list = Array.from(messages, (msg) => {
        const m = encodeBody(msg.body, msg.contentType);
        if (msg.delaySeconds !== undefined) m.delaySeconds = msg.delaySeconds;
        return m;
      });
      return send(
        'sendBatch',
        list,
        options?.delaySeconds === undefined ? {} : { delaySeconds: options.delaySeconds },
      );
    },
  });
}

/** The batch a consumer gets, and what its calls decided (`outcome`), as Workers keep it. */
function queueBatch(event) {
  const acks = new Set();
  const retries = new Map();
  let all = null;
  const messages = event.messages.map((m) => {
    const body = decodeBody(m);
    return Object.freeze({
      id: m.id,
      timestamp: new Date(m.timestamp),
      body,
      attempts: m.attempts,
      ack() {
        if (!retries.has(m.id)) acks.add(m.id);
      },
      retry(options) {
        if (!acks.has(m.id) && !retries.has(m.id))
          retries.set(
            m.id,
            options?.delaySeconds === undefined ? null : Number(options.delaySeconds),
          );
      },
    });
  });
  const batch = Object.freeze({
    queue: event.queue,
    messages: Object.freeze(messages),
    ackAll() {
      all ??= { ack: true };
    },
    retryAll(options) {
      all ??= {
        ack: false,
        delaySeconds: options?.delaySeconds === undefined ? null : Number(options.delaySeconds),
      };
    },
  });
  const outcome = (result, error) => ({
    outcome: result,
    acks: [...acks],
    retries: Object.fromEntries(retries),
    ackAll: all?.ack === true,
    retryAll: all && !all.ack ? { delaySeconds: all.delaySeconds } : null,
    error:
      error === undefined ? null : String(error?.stack ? `${error.name}: ${error.message}` : error),
    stack: error?.stack ? String(error.stack) : null,
  });
  return { batch, outcome };
}

/** @param {{ provide: (name: string, value: unknown) => void, load: (chunk: string) => void, internals: Record<string, any> }} platform */
export default function install(platform) {
  const call = platform.internals.hostCall;
  platform.provide('bindings', (spec) => {
    const env = {};
    for (const [binding, b] of Object.entries(spec))
      if (b.type === 'kv') env[binding] = kvNamespace(call, b.name);
      else if (b.type === 'queue') env[binding] = queueProducer(call, b.name);
      else if (b.type === 'r2') {
        platform.load('r2');
        env[binding] = platform.internals.r2Bucket(call, b.name);
      } else if (b.type === 'd1') {
        platform.load('d1');
        env[binding] = platform.internals.d1Database(call, b.name);
      }
    return env;
  });
  platform.provide('queueBatch', queueBatch);
}
