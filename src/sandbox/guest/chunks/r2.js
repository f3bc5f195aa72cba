// An R2 bucket binding (`env.BUCKET`) as Workers give it: R2Object and R2ObjectBody,
// writeHttpMetadata, checksums, onlyIf conditions and ranges (objects or Headers), multipart
// uploads, and the TypeErrors and RangeErrors of Workers' own binding. The platform keeps the
// objects and checks what needs them (src/bindings/r2*.ts); its refusals arrive worded as R2's.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const asR2Error = (e) => {
  if (e && (e.code === 'invalid_request' || e.code === 'payload_too_large'))
    throw new Error(e.message);
  throw e;
};

const hex = (bytes) =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
const fromHex = (h) => {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(h.slice(i * 2, i * 2 + 2), 16);
  return out.buffer;
};

const HTTP_FIELDS = [
  ['contentType', 'content-type'],
  ['contentLanguage', 'content-language'],
  ['contentDisposition', 'content-disposition'],
  ['contentEncoding', 'content-encoding'],
  ['cacheControl', 'cache-control'],
];

/** httpMetadata as stored (strings, cacheExpiry as ISO), from an object or Headers. */
function httpMetadataIn(m) {
  if (m === undefined || m === null) return {};
  const out = {};
  if (m instanceof Headers) {
    for (const [field, header] of HTTP_FIELDS) {
      const v = m.get(header);
      if (v !== null) out[field] = v;
    }
    const expires = m.get('expires');
    if (expires !== null && !Number.isNaN(Date.parse(expires)))
      out.cacheExpiry = new Date(expires).toISOString();
    return out;
  }
  for (const [field] of HTTP_FIELDS) if (m[field] !== undefined) out[field] = String(m[field]);
  if (m.cacheExpiry !== undefined) out.cacheExpiry = new Date(m.cacheExpiry).toISOString();
  return out;
}

function httpMetadataOut(stored) {
  const out = {};
  for (const [field] of HTTP_FIELDS) if (stored[field] !== undefined) out[field] = stored[field];
  if (stored.cacheExpiry !== undefined) out.cacheExpiry = new Date(stored.cacheExpiry);
  return out;
}

class R2Checksums {
  constructor(hexes) {
    for (const k of ['md5', 'sha1', 'sha256', 'sha384', 'sha512'])
      if (hexes[k]) this[k] = fromHex(hexes[k]);
  }
  toJSON() {
    const out = {};
    for (const k of ['md5', 'sha1', 'sha256', 'sha384', 'sha512'])
      if (this[k]) out[k] = hex(this[k]);
    return out;
  }
}

class R2Object {
  constructor(meta) {
    this.key = meta.key;
    this.version = meta.version;
    this.size = meta.size;
    this.etag = meta.etag;
    this.httpEtag = `"${meta.etag}"`;
    this.uploaded = new Date(meta.uploaded);
    this.httpMetadata = httpMetadataOut(meta.httpMetadata);
    this.customMetadata = { ...meta.customMetadata };
    this.range = meta.range;
    this.checksums = new R2Checksums(meta.checksums);
    this.storageClass = '';
  }
  writeHttpMetadata(headers) {
    for (const [field, header] of HTTP_FIELDS)
      if (this.httpMetadata[field] !== undefined) headers.set(header, this.httpMetadata[field]);
    if (this.httpMetadata.cacheExpiry !== undefined)
      headers.set('expires', this.httpMetadata.cacheExpiry.toUTCString());
  }
}

// a large body stays with the platform and is read a chunk at a time; a large put goes in chunks
const READ_CHUNK = 1024 * 1024;
const WHOLE_READ_CHUNK = 4 * 1024 * 1024;
const PUT_CHUNK = 4 * 1024 * 1024;

class R2ObjectBody extends R2Object {
  #bytes;
  #read;
  #stream;
  #used = false;
  /** `bytes` when the body came with the answer; else `read(offset, length)` fetches a chunk */
  constructor(meta, bytes, read) {
    super(meta);
    this.#bytes = bytes;
    this.#read = read;
  }
  async #take() {
    if (this.#used) throw new TypeError('Body has already been used. It can only be used once.');
    this.#used = true;
    if (!this.#read) return this.#bytes;
    const { offset, length } = this.range;
    const out = new Uint8Array(length);
    for (let at = 0; at < length; ) {
      const b = new Uint8Array(
        await this.#read(offset + at, Math.min(WHOLE_READ_CHUNK, length - at)),
      );
      if (!b.byteLength) throw new Error('get: The object ended before its size. (10001)');
      out.set(b, at);
      at += b.byteLength;
    }
    return out.buffer;
  }
  get body() {
    if (this.#stream) return this.#stream;
    const self = this;
    if (!this.#read) {
      const bytes = this.#bytes;
      return (this.#stream = new ReadableStream({
        type: 'bytes',
        start(c) {
          self.#used = true;
          if (bytes.byteLength) c.enqueue(new Uint8Array(bytes));
          c.close();
        },
      }));
    }
    const { offset, length } = this.range;
    let at = 0;
    return (this.#stream = new ReadableStream({
      type: 'bytes',
      start() {
        self.#used = true;
      },
      async pull(c) {
        const b = new Uint8Array(await self.#read(offset + at, Math.min(READ_CHUNK, length - at)));
        if (!b.byteLength) throw new Error('get: The object ended before its size. (10001)');
        at += b.byteLength;
        c.enqueue(b);
        if (at >= length) c.close();
      },
    }));
  }
  get bodyUsed() {
    return this.#used;
  }
  async arrayBuffer() {
    return (await this.#take()).slice(0);
  }
  async text() {
    return decoder.decode(await this.#take());
  }
  async json() {
    return JSON.parse(await this.text());
  }
  async blob() {
    return new Blob([await this.#take()], { type: this.httpMetadata.contentType ?? '' });
  }
}

const NOT_A_VALUE =
  "Failed to execute 'put' on 'R2Bucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.";

/** A value app code puts, as an ArrayBuffer (a stream is read by putStream, never whole). */
async function valueBytes(value) {
  if (value === null || value === undefined) return new ArrayBuffer(0);
  if (typeof value === 'string') return encoder.encode(value).buffer;
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value))
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  if (value instanceof ReadableStream) return new Response(value).arrayBuffer();
  if (typeof Blob !== 'undefined' && value instanceof Blob) return value.arrayBuffer();
  throw new TypeError(NOT_A_VALUE);
}

const joined = (chunks, size) => {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out.buffer;
};

const chunkOf = (v) => {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError('This ReadableStream did not return bytes.');
};

/**
 * Puts a value: at most PUT_CHUNK bytes in one call, more (a stream read as it comes, or a large
 * buffer) in chunks the platform stores as they arrive, so no object is ever held whole here.
 */
async function putValue(call, name, key, opts, value) {
  const isStream = value instanceof ReadableStream;
  if (!isStream) {
    const bytes = await valueBytes(value);
    if (bytes.byteLength <= PUT_CHUNK) return call('r2.put', [name, key, opts], bytes);
    const { id } = await call('r2.putBegin', [name, key, opts]);
    for (let at = 0; at < bytes.byteLength; at += PUT_CHUNK)
      await call('r2.putChunk', [id], bytes.slice(at, at + PUT_CHUNK));
    return call('r2.putEnd', [id]);
  }
  const reader = value.getReader();
  let pending = [];
  let size = 0;
  let id = null;
  // sends whole chunks of PUT_CHUNK bytes (all that is left at the end), keeping the rest
  const flush = async (last) => {
    const bytes = joined(pending, size);
    let at = 0;
    for (; bytes.byteLength - at >= PUT_CHUNK || (last && at < bytes.byteLength); at += PUT_CHUNK) {
      if (id === null) id = (await call('r2.putBegin', [name, key, opts])).id;
      await call('r2.putChunk', [id], bytes.slice(at, at + PUT_CHUNK));
    }
    pending = at < bytes.byteLength ? [new Uint8Array(bytes, at)] : [];
    size = bytes.byteLength - Math.min(at, bytes.byteLength);
  };
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      const c = chunkOf(r.value);
      pending.push(c);
      size += c.byteLength;
      if (size >= PUT_CHUNK) await flush(false);
    }
    if (id === null && size <= PUT_CHUNK)
      return call('r2.put', [name, key, opts], joined(pending, size));
    await flush(true);
  } catch (e) {
    if (id !== null) call('r2.putAbort', [id]).catch(() => {});
    throw e;
  }
  return call('r2.putEnd', [id]);
}

/** One etag condition: `*`, `W/"x"` (weak), `"x"` or `x` (strong). */
const etagCond = (s) => {
  const t = String(s).trim();
  if (t === '*') return { type: 'wildcard' };
  const weak = /^W\/"(.*)"$/.exec(t);
  if (weak) return { type: 'weak', value: weak[1] };
  const strong = /^"(.*)"$/.exec(t);
  return { type: 'strong', value: strong ? strong[1] : t };
};
const etagList = (v) =>
  v === undefined || v === null
    ? undefined
    : (Array.isArray(v) ? v : String(v).split(',')).map(etagCond);
const isoOf = (d) => (d === undefined || d === null ? undefined : new Date(d).toISOString());

function conditionsIn(onlyIf) {
  if (onlyIf === undefined || onlyIf === null) return undefined;
  if (onlyIf instanceof Headers)
    return {
      etagMatches: etagList(onlyIf.get('if-match') ?? undefined),
      etagDoesNotMatch: etagList(onlyIf.get('if-none-match') ?? undefined),
      uploadedAfter: isoOf(onlyIf.get('if-modified-since') ?? undefined),
      uploadedBefore: isoOf(onlyIf.get('if-unmodified-since') ?? undefined),
      secondsGranularity: true,
    };
  return {
    etagMatches: etagList(onlyIf.etagMatches),
    etagDoesNotMatch: etagList(onlyIf.etagDoesNotMatch),
    uploadedAfter: isoOf(onlyIf.uploadedAfter),
    uploadedBefore: isoOf(onlyIf.uploadedBefore),
    secondsGranularity: onlyIf.secondsGranularity === true,
  };
}

function rangeIn(range) {
  if (range === undefined || range === null) return undefined;
  if (range instanceof Headers) {
    const h = range.get('range');
    return h === null ? undefined : { header: h };
  }
  if (range.offset !== undefined && range.offset < 0)
    throw new RangeError(
      `Invalid range. Starting offset (${range.offset}) must be greater than or equal to 0.`,
    );
  const out = {};
  for (const k of ['offset', 'length', 'suffix'])
    if (range[k] !== undefined) out[k] = Number(range[k]);
  return out;
}

const HASHES = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'];

function hashIn(options) {
  const given = HASHES.filter((f) => options?.[f] !== undefined);
  if (given.length > 1) throw new TypeError('You cannot specify multiple hashing algorithms.');
  if (!given.length) return undefined;
  const v = options[given[0]];
  return {
    field: given[0],
    hex:
      typeof v === 'string'
        ? v
        : hex(
            ArrayBuffer.isView(v) ? v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength) : v,
          ),
  };
}

// workerd's class name: apps find their buckets in env by it
class R2Bucket {}

function r2Bucket(call, name) {
  const objectOf = (got) => {
    if (got === null) return null;
    if (got.bytes) return new R2ObjectBody(got.value, got.bytes);
    if (!got.stream) return new R2Object(got.meta);
    const { key, version } = got.meta;
    return new R2ObjectBody(got.meta, null, (offset, length) =>
      call('r2.read', [name, key, version, offset, length])
        .then((r) => r.bytes)
        .catch(asR2Error),
    );
  };
  const upload = (key, uploadId) =>
    Object.freeze({
      key,
      uploadId,
      async uploadPart(partNumber, value) {
        const n = Number(partNumber);
        if (!Number.isInteger(n) || n < 1 || n > 10000)
          throw new TypeError(
            `Part number must be between 1 and 10000 (inclusive). Actual value was: ${partNumber}`,
          );
        const bytes = await valueBytes(value);
        return call('r2.uploadPart', [name, key, uploadId, n], bytes).catch(asR2Error);
      },
      async abort() {
        await call('r2.abortUpload', [name, key, uploadId]).catch(asR2Error);
      },
      async complete(parts) {
        const meta = await call('r2.completeUpload', [
          name,
          key,
          uploadId,
          Array.from(parts),
        ]).catch(asR2Error);
        return new R2Object(meta);
      },
    });
  return Object.freeze(
    Object.setPrototypeOf(
      {
        async head(key) {
          return objectOf(await call('r2.head', [name, String(key), {}]).catch(asR2Error));
        },
        async get(key, options) {
          const opts = { range: rangeIn(options?.range), onlyIf: conditionsIn(options?.onlyIf) };
          return objectOf(await call('r2.get', [name, String(key), opts]).catch(asR2Error));
        },
        async put(key, value, options) {
          const opts = {
            httpMetadata: httpMetadataIn(options?.httpMetadata),
            customMetadata: options?.customMetadata ? { ...options.customMetadata } : {},
            hash: hashIn(options),
            onlyIf: conditionsIn(options?.onlyIf),
          };
          const meta = await putValue(call, name, String(key), opts, value).catch(asR2Error);
          return meta === null ? null : new R2Object(meta);
        },
        async delete(keys) {
          const list = Array.isArray(keys) ? keys.map(String) : String(keys);
          await call('r2.delete', [name, list]).catch(asR2Error);
        },
        async list(options) {
          const r = await call('r2.list', [name, options ?? {}]).catch(asR2Error);
          return { ...r, objects: r.objects.map((m) => new R2Object(m)) };
        },
        async createMultipartUpload(key, options) {
          const k = String(key);
          const r = await call('r2.createUpload', [
            name,
            k,
            {
              httpMetadata: httpMetadataIn(options?.httpMetadata),
              customMetadata: options?.customMetadata ? { ...options.customMetadata } : {},
            },
          ]).catch(asR2Error);
          return upload(k, r.uploadId);
        },
        resumeMultipartUpload(key, uploadId) {
          return upload(String(key), String(uploadId));
        },
      },
      R2Bucket.prototype,
    ),
  );
}

/** @param {{ internals: Record<string, any> }} platform */
export default function install(platform) {
  platform.internals.r2Bucket = r2Bucket;
}
