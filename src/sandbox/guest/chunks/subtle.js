// crypto.subtle, CryptoKey, SubtleCrypto and Crypto. The work is done by Node's Web Crypto in the
// worker (src/sandbox/subtle.ts); a CryptoKey here holds the id of the key kept there.

const ID = Symbol('id');
const INFO = Symbol('info');

class CryptoKey {
  constructor() {
    throw new TypeError('Illegal constructor');
  }
  get type() {
    return this[INFO].type;
  }
  get extractable() {
    return this[INFO].extractable;
  }
  get algorithm() {
    return this[INFO].algorithm;
  }
  get usages() {
    return this[INFO].usages.slice();
  }
  get [Symbol.toStringTag]() {
    return 'CryptoKey';
  }
}

export default function install(platform) {
  platform.load('events'); // DOMException
  const DOMException = globalThis.DOMException;
  const b64 = (buffer) => platform.b64encode(buffer);
  const fromB64 = (s) => {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };
  const enc = (v) => {
    if (v instanceof CryptoKey) return { $key: v[ID] };
    if (v instanceof ArrayBuffer) return { $b64: b64(v.slice(0)) };
    if (ArrayBuffer.isView(v))
      return { $b64: b64(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) };
    if (Array.isArray(v)) return v.map(enc);
    if (v && typeof v === 'object') {
      const o = {};
      for (const k of Object.keys(v)) o[k] = enc(v[k]);
      return o;
    }
    return v;
  };
  const dec = (v) => {
    if (Array.isArray(v)) return v.map(dec);
    if (v && typeof v === 'object') {
      if (typeof v.$b64 === 'string') return fromB64(v.$b64);
      const o = {};
      for (const k of Object.keys(v)) o[k] = dec(v[k]);
      return o;
    }
    return v;
  };
  // Host keys live while a CryptoKey of app code carries their id: the host counts each CryptoKey it
  // answered with an id, and each one collected is reported, so code that imports a key per call
  // holds a bounded number of them.
  const collected = new FinalizationRegistry((id) => platform.subtleRelease(id));
  const key = (d) => {
    const k = Object.create(CryptoKey.prototype);
    k[ID] = d.$key;
    collected.register(k, d.$key);
    k[INFO] = {
      type: d.type,
      extractable: d.extractable,
      algorithm: dec(d.algorithm),
      usages: d.usages,
    };
    return k;
  };
  const run = (method, args) => {
    // the arguments' bytes are copied at the call, as the spec's "get a copy of the bytes" says: code
    // that reuses its buffer right after calling must not change what the operation works on
    let payload;
    try {
      payload = JSON.stringify(enc(args));
    } catch (e) {
      return Promise.reject(e);
    }
    return Promise.resolve()
      .then(() => platform.subtle(method, payload))
      .then(
        ([json, bytes]) => {
          const r = JSON.parse(json);
          if (r.bytes) return bytes;
          if ('bool' in r) return r.bool;
          if (r.key) return key(r.key);
          if (r.pair)
            return { publicKey: key(r.pair.publicKey), privateKey: key(r.pair.privateKey) };
          return r.jwk;
        },
        (e) => {
          let info;
          try {
            info = JSON.parse(e.message);
          } catch {
            info = { code: 'OperationError', message: String(e?.message) };
          }
          throw info.code === 'TypeError'
            ? new TypeError(info.message)
            : new DOMException(info.message, info.code);
        },
      );
  };

  class SubtleCrypto {
    constructor() {
      throw new TypeError('Illegal constructor');
    }
    digest(algorithm, data) {
      return run('digest', [algorithm, data]);
    }
    sign(algorithm, key, data) {
      return run('sign', [algorithm, key, data]);
    }
    verify(algorithm, key, signature, data) {
      return run('verify', [algorithm, key, signature, data]);
    }
    encrypt(algorithm, key, data) {
      return run('encrypt', [algorithm, key, data]);
    }
    decrypt(algorithm, key, data) {
      return run('decrypt', [algorithm, key, data]);
    }
    deriveBits(algorithm, baseKey, length) {
      return run('deriveBits', [algorithm, baseKey, length === undefined ? null : length]);
    }
    deriveKey(algorithm, baseKey, derivedKeyType, extractable, usages) {
      return run('deriveKey', [algorithm, baseKey, derivedKeyType, extractable, usages]);
    }
    generateKey(algorithm, extractable, usages) {
      return run('generateKey', [algorithm, extractable, usages]);
    }
    importKey(format, keyData, algorithm, extractable, usages) {
      return run('importKey', [format, keyData, algorithm, extractable, usages]);
    }
    exportKey(format, key) {
      return run('exportKey', [format, key]);
    }
    wrapKey(format, key, wrappingKey, wrapAlgorithm) {
      return run('wrapKey', [format, key, wrappingKey, wrapAlgorithm]);
    }
    unwrapKey(
      format,
      wrappedKey,
      unwrappingKey,
      unwrapAlgorithm,
      unwrappedKeyAlgorithm,
      extractable,
      usages,
    ) {
      return run('unwrapKey', [
        format,
        wrappedKey,
        unwrappingKey,
        unwrapAlgorithm,
        unwrappedKeyAlgorithm,
        extractable,
        usages,
      ]);
    }
  }
  class Crypto {
    constructor() {
      throw new TypeError('Illegal constructor');
    }
  }
  platform.load('crypto'); // the object whose prototype Crypto.prototype becomes
  Object.setPrototypeOf(platform.crypto, Crypto.prototype);
  platform.provide('subtle', Object.create(SubtleCrypto.prototype));
  platform.define('CryptoKey', CryptoKey);
  platform.define('SubtleCrypto', SubtleCrypto);
  platform.define('Crypto', Crypto);
}
