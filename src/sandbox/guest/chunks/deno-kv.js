// Deno KV (`Deno.openKv()`, `Deno.KvU64`) over the platform's KV store (src/bindings/deno-kv.ts):
// keys are encoded here in Deno's own key order (its codec's type tags: byte strings, strings,
// bigints, numbers, booleans; NUL escaped in byte strings and strings), values as the structured
// clone's JSON, and `atomic()` commits its checks and mutations as one.
import { deserialize, serialize } from '@ungap/structured-clone';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const U64_MAX = (1n << 64n) - 1n;

class KvU64 {
  #value;
  constructor(value) {
    if (typeof value !== 'bigint')
      throw new TypeError(`Value must be a bigint: received ${typeof value}`);
    if (value < 0n) throw new RangeError(`Value must be a positive bigint: received ${value}`);
    if (value > U64_MAX) throw new RangeError('Value must fit in a 64-bit unsigned integer');
    this.#value = value;
  }
  get value() {
    return this.#value;
  }
  valueOf() {
    return this.#value;
  }
  toString() {
    return String(this.#value);
  }
  get [Symbol.toStringTag]() {
    return 'Deno.KvU64';
  }
}

// ---- the key codec ---------------------------------------------------------------------------
const escaped = (out, bytes) => {
  for (const b of bytes) {
    out.push(b);
    if (b === 0) out.push(0xff);
  }
  out.push(0);
};

function encodeKey(key) {
  if (!Array.isArray(key)) throw new TypeError('Key must be an array');
  const out = [];
  for (const part of key) {
    if (ArrayBuffer.isView(part)) {
      out.push(0x01);
      escaped(out, new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    } else if (typeof part === 'string') {
      out.push(0x02);
      escaped(out, encoder.encode(part));
    } else if (typeof part === 'bigint') {
      if (part === 0n) out.push(0x14);
      else {
        const neg = part < 0n;
        let n = neg ? -part : part;
        const bytes = [];
        while (n > 0n) {
          bytes.unshift(Number(n & 0xffn));
          n >>= 8n;
        }
        if (bytes.length > 8) {
          if (bytes.length > 255) throw new TypeError('Key part too large');
          if (neg) out.push(0x0b, bytes.length ^ 0xff, ...bytes.map((b) => b ^ 0xff));
          else out.push(0x1d, bytes.length, ...bytes);
        } else if (neg) out.push(0x14 - bytes.length, ...bytes.map((b) => b ^ 0xff));
        else out.push(0x14 + bytes.length, ...bytes);
      }
    } else if (typeof part === 'number') {
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, Number.isNaN(part) ? Number.NaN : part);
      const bytes = [...new Uint8Array(view.buffer)];
      if (bytes[0] & 0x80) for (let i = 0; i < 8; i++) bytes[i] ^= 0xff;
      else bytes[0] ^= 0x80;
      out.push(0x21, ...bytes);
    } else if (typeof part === 'boolean') out.push(part ? 0x27 : 0x26);
    else throw new TypeError('expected string, number, bigint, ArrayBufferView, boolean');
  }
  return new Uint8Array(out);
}

function decodeKey(bytes) {
  const key = [];
  let i = 0;
  const unescape = () => {
    const out = [];
    while (i < bytes.length) {
      const b = bytes[i++];
      if (b === 0) {
        if (bytes[i] === 0xff) {
          out.push(0);
          i++;
        } else break;
      } else out.push(b);
    }
    return new Uint8Array(out);
  };
  while (i < bytes.length) {
    const tag = bytes[i++];
    if (tag === 0x01) key.push(unescape());
    else if (tag === 0x02) key.push(decoder.decode(unescape()));
    else if (tag === 0x21) {
      const b = bytes.slice(i, i + 8);
      i += 8;
      if (b[0] & 0x80) b[0] ^= 0x80;
      else for (let j = 0; j < 8; j++) b[j] ^= 0xff;
      key.push(new DataView(b.buffer).getFloat64(0));
    } else if (tag === 0x26 || tag === 0x27) key.push(tag === 0x27);
    else if (tag >= 0x0b && tag <= 0x1d) {
      let neg = tag < 0x14;
      let len = Math.abs(tag - 0x14);
      if (tag === 0x1d) len = bytes[i++];
      if (tag === 0x0b) {
        len = bytes[i++] ^ 0xff;
        neg = true;
      }
      let n = 0n;
      for (let j = 0; j < len; j++)
        n = (n << 8n) | BigInt(neg ? bytes[i + j] ^ 0xff : bytes[i + j]);
      i += len;
      key.push(neg ? -n : n);
    } else throw new TypeError('Unreadable key');
  }
  return key;
}

const b64 = (bytes) => {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
};
const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const wire = (key) => b64(encodeKey(key));
const keyBack = (s) => decodeKey(unb64(s));

// ---- values ------------------------------------------------------------------------------------
const valueText = (v) =>
  v instanceof KvU64
    ? JSON.stringify({ $u64: String(v.value) })
    : JSON.stringify({ v: serialize(v, { lossy: false }) });
const valueBack = (text) => {
  const o = JSON.parse(text);
  return o.$u64 !== undefined ? new KvU64(BigInt(o.$u64)) : deserialize(o.v);
};
const entryOf = (key, e) =>
  e === null
    ? { key, value: null, versionstamp: null }
    : { key, value: valueBack(e.value), versionstamp: e.versionstamp };

/** sum/min/max take a bigint, as Deno's do (a KvU64 of it is what is stored). */
const u64Operand = (n) => String(new KvU64(n).value);

const asKvError = (e) => {
  if (e && e.code === 'invalid_request') throw new TypeError(e.message);
  throw e;
};

class AtomicOperation {
  #call;
  #checks = [];
  #mutations = [];
  constructor(call) {
    this.#call = call;
  }
  check(...checks) {
    for (const c of checks)
      this.#checks.push({ key: wire(c.key), versionstamp: c.versionstamp ?? null });
    return this;
  }
  mutate(...mutations) {
    for (const m of mutations) {
      if (m.type === 'set')
        this.set(m.key, m.value, m.expireIn ? { expireIn: m.expireIn } : undefined);
      else if (m.type === 'delete') this.delete(m.key);
      else if (m.type === 'sum' || m.type === 'min' || m.type === 'max')
        this[m.type](m.key, m.value);
      else throw new TypeError(`Invalid mutation type: ${m.type}`);
    }
    return this;
  }
  set(key, value, options) {
    if (!key.length) throw new TypeError('key cannot be empty');
    const m = { type: 'set', key: wire(key), value: valueText(value) };
    if (options?.expireIn !== undefined) m.expireIn = Number(options.expireIn);
    this.#mutations.push(m);
    return this;
  }
  delete(key) {
    this.#mutations.push({ type: 'delete', key: wire(key) });
    return this;
  }
  sum(key, n) {
    this.#mutations.push({ type: 'sum', key: wire(key), u64: u64Operand(n) });
    return this;
  }
  min(key, n) {
    this.#mutations.push({ type: 'min', key: wire(key), u64: u64Operand(n) });
    return this;
  }
  max(key, n) {
    this.#mutations.push({ type: 'max', key: wire(key), u64: u64Operand(n) });
    return this;
  }
  enqueue() {
    throw new TypeError(
      'Deno KV queues are not available here: use a Workers queue (env.QUEUE.send)',
    );
  }
  commit() {
    return this.#call('denokv.commit', [this.#checks, this.#mutations]).catch(asKvError);
  }
}

/** The iterator `list()` answers: entries in key order (or reversed), with the cursor to go on from. */
function lister(call, selector, options) {
  const prefix = selector.prefix ? encodeKey(selector.prefix) : null;
  const withByte = (bytes, b) => {
    const out = new Uint8Array(bytes.length + 1);
    out.set(bytes);
    out[bytes.length] = b;
    return out;
  };
  let start = selector.start ? encodeKey(selector.start) : prefix ? withByte(prefix, 0x00) : null;
  let end = selector.end ? encodeKey(selector.end) : prefix ? withByte(prefix, 0xff) : null;
  const reverse = options?.reverse === true;
  let left = options?.limit ?? Number.POSITIVE_INFINITY;
  let cursor = '';
  if (options?.cursor) {
    const last = unb64(options.cursor);
    if (reverse) end = last;
    else start = withByte(last, 0x00);
  }
  const it = {
    get cursor() {
      return cursor;
    },
    async *[Symbol.asyncIterator]() {
      while (left > 0) {
        const page = await call('denokv.list', [
          {
            ...(start ? { start: b64(start) } : {}),
            ...(end ? { end: b64(end) } : {}),
            reverse,
            limit: Math.min(left, options?.batchSize ?? 500, 500),
          },
        ]).catch(asKvError);
        if (!page.length) return;
        for (const e of page) {
          left--;
          cursor = e.key;
          yield entryOf(keyBack(e.key), e);
          if (left <= 0) return;
        }
        const last = unb64(page[page.length - 1].key);
        if (reverse) end = last;
        else start = withByte(last, 0x00);
      }
    },
  };
  return it;
}

function openKv(call) {
  return Object.freeze({
    async get(key) {
      const [e] = await call('denokv.get', [[wire(key)]]).catch(asKvError);
      return entryOf(key, e);
    },
    async getMany(keys) {
      if (keys.length > 10) throw new TypeError('Too many ranges (max 10)');
      const got = await call('denokv.get', [keys.map(wire)]).catch(asKvError);
      return keys.map((k, i) => entryOf(k, got[i]));
    },
    set(key, value, options) {
      return new AtomicOperation(call).set(key, value, options).commit();
    },
    async delete(key) {
      await new AtomicOperation(call).delete(key).commit();
    },
    list(selector, options) {
      return lister(call, selector, options);
    },
    atomic() {
      return new AtomicOperation(call);
    },
    enqueue() {
      throw new TypeError(
        'Deno KV queues are not available here: use a Workers queue (env.QUEUE.send)',
      );
    },
    listenQueue() {
      throw new TypeError(
        'Deno KV queues are not available here: use a Workers queue and its queue() handler',
      );
    },
    watch() {
      throw new TypeError('Deno KV watch is not available here');
    },
    close() {},
    [Symbol.dispose]() {},
  });
}

/** @param {{ internals: Record<string, any> }} platform */
export default function install(platform) {
  platform.internals.denoKv = { open: () => openKv(platform.internals.hostCall), KvU64 };
}
