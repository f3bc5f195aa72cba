// `@netlify/blobs` in server code, bundled in its place: `getStore(name)` and the Store API
// (get in five types, getWithMetadata, getMetadata, set, setJSON with onlyIfMatch/onlyIfNew,
// delete, deleteAll, list with prefix, directories and pages) over the platform's object store
// (src/bindings/netlify-blobs.ts), with the package's own checks and messages. A store is the
// app's, kept across releases; deploy-scoped stores are stores of their own name.

const host = (method, args, bytes) => globalThis.__netlifyBlobsHost(method, args, bytes);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function validateKey(key) {
  if (key === '') throw new Error('Blob key must not be empty.');
  if (key.startsWith('/') || key.startsWith('%2F'))
    throw new Error('Blob key must not start with forward slash (/).');
  if (encoder.encode(key).length > 600)
    throw new Error(
      'Blob key must be a sequence of Unicode characters whose UTF-8 encoding is at most 600 bytes long.',
    );
}

function validateStoreName(name) {
  if (name.includes('/') || name.includes('%2F'))
    throw new Error('Store name must not contain forward slashes (/).');
  if (encoder.encode(name).length > 64)
    throw new Error(
      'Store name must be a sequence of Unicode characters whose UTF-8 encoding is at most 64 bytes long.',
    );
}

function decode(bytes, type, contentType) {
  if (type === 'arrayBuffer') return bytes;
  if (type === 'blob') return new Blob([bytes], { type: contentType ?? '' });
  if (type === 'stream')
    return new ReadableStream({
      start(c) {
        if (bytes.byteLength) c.enqueue(new Uint8Array(bytes));
        c.close();
      },
    });
  const text = decoder.decode(bytes);
  return type === 'json' ? JSON.parse(text) : text;
}

async function bytesOf(data) {
  if (typeof data === 'string') return encoder.encode(data).buffer;
  if (data instanceof ArrayBuffer) return data;
  if (ArrayBuffer.isView(data))
    return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  if (data instanceof Blob) return data.arrayBuffer();
  throw new TypeError('Blob data must be a string, an ArrayBuffer or a Blob');
}

export class Store {
  #name;
  constructor(options) {
    this.#name = options.name;
  }
  async get(key, options) {
    validateKey(key);
    const r = await host('blobs.get', [this.#name, key, {}]);
    return r === null ? null : decode(r.bytes, options?.type ?? 'text', r.value.contentType);
  }
  async getWithMetadata(key, options) {
    validateKey(key);
    const r = await host('blobs.get', [this.#name, key, {}]);
    if (r === null) return null;
    const etag = r.value.etag;
    const data =
      options?.etag !== undefined && options.etag === etag
        ? null
        : decode(r.bytes, options?.type ?? 'text', r.value.contentType);
    return { data, etag, metadata: r.value.metadata };
  }
  async getMetadata(key) {
    validateKey(key);
    const r = await host('blobs.get', [this.#name, key, { head: true }]);
    return r === null ? null : { etag: r.meta.etag, metadata: r.meta.metadata };
  }
  async set(key, data, options = {}) {
    validateKey(key);
    if ('onlyIfMatch' in options && 'onlyIfNew' in options)
      throw new Error(
        "The 'onlyIfMatch' and 'onlyIfNew' options are mutually exclusive. Using 'onlyIfMatch' will make the write succeed only if there is an entry for the key with the given content, while 'onlyIfNew' will make the write succeed only if there is no entry for the key.",
      );
    const r = await host(
      'blobs.set',
      [
        this.#name,
        key,
        {
          metadata: options.metadata ?? {},
          ...(options.onlyIfMatch !== undefined ? { onlyIfMatch: options.onlyIfMatch } : {}),
          ...(options.onlyIfNew ? { onlyIfNew: true } : {}),
        },
      ],
      await bytesOf(data),
    );
    return r === null ? { modified: false } : { etag: r.etag, modified: true };
  }
  setJSON(key, data, options) {
    return this.set(key, JSON.stringify(data), options);
  }
  async delete(key) {
    validateKey(key);
    await host('blobs.delete', [this.#name, key]);
  }
  async deleteAll() {
    let deletedBlobs = 0;
    for (;;) {
      const page = await host('blobs.list', [this.#name, {}]);
      if (!page.blobs.length) return { deletedBlobs };
      for (const b of page.blobs) await host('blobs.delete', [this.#name, b.key]);
      deletedBlobs += page.blobs.length;
    }
  }
  list(options = {}) {
    const name = this.#name;
    const pages = {
      async *[Symbol.asyncIterator]() {
        let cursor;
        do {
          const page = await host('blobs.list', [
            name,
            {
              ...(options.prefix ? { prefix: options.prefix } : {}),
              ...(options.directories ? { directories: true } : {}),
              ...(cursor ? { cursor } : {}),
            },
          ]);
          cursor = page.cursor;
          yield { blobs: page.blobs, directories: page.directories };
        } while (cursor);
      },
    };
    if (options.paginate) return pages;
    return (async () => {
      const all = { blobs: [], directories: [] };
      for await (const p of pages) {
        all.blobs.push(...p.blobs);
        all.directories.push(...p.directories);
      }
      return all;
    })();
  }
}

export function getStore(input, options) {
  const name = typeof input === 'string' ? input : input?.name;
  if (typeof name !== 'string' || !name)
    throw new Error(
      'The `getStore` method requires the name of the store as a string or as the `name` property of an options object',
    );
  validateStoreName(name);
  return new Store({ ...(options ?? {}), name });
}

/** A deploy's store: here, a store of its own name (a release's data is the app's, across deploys). */
export function getDeployStore(input, options) {
  const name = typeof input === 'string' ? input : (input?.name ?? 'deploy');
  return getStore(`deploy:${name}`, options);
}

export async function listStores() {
  return { stores: [] };
}
export function connectLambda() {}
export function setEnvironmentContext() {}
