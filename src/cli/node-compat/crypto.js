// node:crypto as the CLI bundles it into server code: unenv's module, with the parts apps use
// most made real over the sandbox: createHash and createHmac (Node's own, synchronous, through
// the sandbox's __nodeHash), randomBytes, randomInt, timingSafeEqual, and Web Crypto.
import { Buffer } from 'node:buffer';
export * from 'unenv/node/crypto';
import unenvCrypto from 'unenv/node/crypto';

const toBytes = (data, encoding) => {
  if (typeof data === 'string') return Buffer.from(data, encoding ?? 'utf8');
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data))
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(
    'The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView',
  );
};

class Digest {
  #algorithm;
  #key;
  #parts = [];
  #done = false;
  constructor(algorithm, key) {
    this.#algorithm = String(algorithm);
    this.#key = key;
    globalThis.__nodeHash(this.#algorithm, new Uint8Array(0), key); // an unknown algorithm throws here, as in Node
  }
  update(data, encoding) {
    if (this.#done) throw new Error('Digest already called');
    this.#parts.push(toBytes(data, encoding));
    return this;
  }
  digest(encoding) {
    if (this.#done) throw new Error('Digest already called');
    this.#done = true;
    const out = Buffer.from(
      globalThis.__nodeHash(this.#algorithm, Buffer.concat(this.#parts), this.#key),
    );
    return encoding ? out.toString(encoding) : out;
  }
  copy() {
    const c = new Digest(this.#algorithm, this.#key);
    for (const p of this.#parts) c.update(p);
    return c;
  }
}
export class Hash extends Digest {}
export class Hmac extends Digest {}

export function createHash(algorithm) {
  return new Hash(algorithm);
}
export function createHmac(algorithm, key) {
  const k = key && typeof key === 'object' && 'export' in key ? key.export() : toBytes(key);
  return new Hmac(algorithm, k);
}
export function hash(algorithm, data, outputEncoding = 'hex') {
  return createHash(algorithm).update(data).digest(outputEncoding);
}
export function randomBytes(size, callback) {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 65536)
    globalThis.crypto.getRandomValues(out.subarray(i, i + 65536));
  if (typeof callback === 'function') {
    queueMicrotask(() => callback(null, out));
    return undefined;
  }
  return out;
}
export const pseudoRandomBytes = randomBytes;
export function randomFillSync(buf, offset = 0, size) {
  const view = new Uint8Array(buf.buffer ?? buf, buf.byteOffset ?? 0, buf.byteLength);
  const end = size === undefined ? view.length : offset + size;
  globalThis.crypto.getRandomValues(view.subarray(offset, end));
  return buf;
}
export function randomInt(min, max, callback) {
  if (max === undefined || typeof max === 'function') [min, max, callback] = [0, min, max];
  const range = max - min;
  if (!Number.isSafeInteger(range) || range <= 0)
    throw new RangeError('The "max" argument must be greater than "min"');
  const limit = 2 ** 48 - (2 ** 48 % range);
  let n;
  do n = Number(randomBytes(6).readUIntBE(0, 6));
  while (n >= limit);
  const value = min + (n % range);
  if (typeof callback === 'function') {
    queueMicrotask(() => callback(null, value));
    return undefined;
  }
  return value;
}
export function timingSafeEqual(a, b) {
  const x = toBytes(a);
  const y = toBytes(b);
  if (x.byteLength !== y.byteLength)
    throw new RangeError('Input buffers must have the same byte length');
  let diff = 0;
  for (let i = 0; i < x.byteLength; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}
export function getHashes() {
  return [
    'md5',
    'sha1',
    'sha224',
    'sha256',
    'sha384',
    'sha512',
    'sha512-256',
    'sha3-256',
    'sha3-512',
  ];
}
export const webcrypto = globalThis.crypto;
export const subtle = globalThis.crypto.subtle;
export const getRandomValues = (a) => globalThis.crypto.getRandomValues(a);
export const randomUUID = () => globalThis.crypto.randomUUID();

export default {
  ...unenvCrypto,
  Hash,
  Hmac,
  createHash,
  createHmac,
  hash,
  randomBytes,
  pseudoRandomBytes,
  randomFillSync,
  randomInt,
  timingSafeEqual,
  getHashes,
  webcrypto,
  subtle,
  getRandomValues,
  randomUUID,
};
