/**
 * A platform call's answer that carries bytes (a KV value, an object's body): they cross to the
 * sandbox worker as one transferred ArrayBuffer beside the JSON, never as base64, and reach the
 * guest as `[json, ArrayBuffer]`.
 */
export class HostBytes {
  readonly value: unknown;
  readonly bytes: Uint8Array;
  constructor(value: unknown, bytes: Uint8Array) {
    this.value = value;
    this.bytes = bytes;
  }
}

/** The bytes in an ArrayBuffer of their own, to transfer (a Buffer may be a view of a shared pool). */
export function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}
