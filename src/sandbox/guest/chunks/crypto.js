// `crypto` (getRandomValues, randomUUID; `subtle` is its own chunk): a part of the prelude loaded on
// first use. Random bytes and UUIDs are the host's (Node's CSPRNG).

/** @param {{ define: (name: string, value: unknown) => void, internals: any, crypto: object }} platform */
export default function install(platform) {
  const { randomBytes, randomUUID, subtle } = platform.internals;
  const crypto = {
    getRandomValues(view) {
      if (!ArrayBuffer.isView(view))
        throw new TypeError('getRandomValues: expected an integer typed array');
      // the standard's errors: a float array or a DataView is a TypeMismatchError, more than
      // 65,536 bytes a QuotaExceededError (both DOMExceptions, as in Node and workerd)
      if (view instanceof DataView || view instanceof Float32Array || view instanceof Float64Array)
        throw new DOMException(
          'getRandomValues: expected an integer typed array',
          'TypeMismatchError',
        );
      if (view.byteLength > 65536)
        throw new DOMException(
          `getRandomValues: at most 65536 bytes, asked for ${view.byteLength}`,
          'QuotaExceededError',
        );
      new Uint8Array(view.buffer, view.byteOffset, view.byteLength).set(
        new Uint8Array(randomBytes(view.byteLength)),
      );
      return view;
    },
    randomUUID() {
      return randomUUID();
    },
  };
  Object.defineProperty(crypto, 'subtle', { configurable: true, enumerable: true, get: subtle });
  platform.crypto = crypto;
  platform.define('crypto', crypto);
}
