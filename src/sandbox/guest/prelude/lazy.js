// @ts-check
/**
 * Globals whose implementation is a bundled chunk (guest/chunks/*.js), evaluated on first touch;
 * UTF-8 and bytes helpers the chunks share through `platform.internals`.
 */
import { G, defineProperty, getOwnPropertyDescriptor, hide, host, wire } from './head.js';

// ---- lazily loaded parts -----------------------------------------------------------------------
// Globals whose implementation is a bundled chunk (guest/chunks/*.js): the chunk is evaluated on
// first touch of one of its globals (not billed to the app), then defines the real values.
export var loadedChunks = {};

export var provided = {};

export var platform = {
  define: function (name, value) {
    hide(G, name, value);
  },
  load: function (chunk) {
    loadChunk(chunk);
  },
  provide: function (name, value) {
    provided[name] = value;
  },
  // set by the crypto chunk
  crypto: {},
  /** @type {Record<string, any>} what the chunks that are parts of the prelude (fetch, text, url-search-params, console, timers, crypto) use of it */
  internals: {},
  subtle: host.subtle,
  subtleRelease: host.subtleRelease,
  b64encode: host.b64encode,
  intl: host.intl,
  /** A secret's value (or undefined): what ctx.secrets.get, env.NAME, process.env and Deno.env read. */
  secret: function (name) {
    var v = host.secret(wire(String(name)));
    return v === undefined ? undefined : JSON.parse(v);
  },
};

export var loadChunk = function (chunk) {
  if (loadedChunks[chunk]) return;
  loadedChunks[chunk] = 'loading';
  try {
    host.loadChunk(chunk)(platform);
  } finally {
    loadedChunks[chunk] = 'loaded';
  }
};

/** Each of `names` on `target` becomes an accessor that loads `chunk`, which defines the real value. */
export var lazyOn = function (target, chunk, names) {
  names.forEach(function (name) {
    defineProperty(target, name, {
      configurable: true,
      enumerable: false,
      get: function () {
        // a library feature-testing for the property while its own chunk loads finds none
        if (loadedChunks[chunk] === 'loading') return undefined;
        loadChunk(chunk);
        var d = getOwnPropertyDescriptor(target, name);
        if (!d || d.get) throw new Error('platform chunk ' + chunk + ' did not define ' + name);
        return d.value;
      },
      set: function (v) {
        hide(target, name, v);
      },
    });
  });
};

var lazy = function (chunk, names) {
  lazyOn(G, chunk, names);
};

lazy('events', [
  'Event',
  'EventTarget',
  'CustomEvent',
  'AbortController',
  'AbortSignal',
  'DOMException',
]);

lazy('structured-clone', ['structuredClone']);

lazy('messaging', ['MessageChannel', 'MessagePort', 'MessageEvent']);

lazy('url-pattern', ['URLPattern']);

lazy('subtle', ['CryptoKey', 'SubtleCrypto', 'Crypto']);

lazy('streams', [
  'ReadableStream',
  'ReadableStreamDefaultReader',
  'ReadableStreamBYOBReader',
  'ReadableStreamBYOBRequest',
  'ReadableStreamDefaultController',
  'ReadableByteStreamController',
  'WritableStream',
  'WritableStreamDefaultWriter',
  'WritableStreamDefaultController',
  'TransformStream',
  'TransformStreamDefaultController',
  'ByteLengthQueuingStrategy',
  'CountQueuingStrategy',
  'TextEncoderStream',
  'TextDecoderStream',
  'CompressionStream',
  'DecompressionStream',
]);

lazy('forms', ['Blob', 'File', 'FormData']);

lazy('intl', ['Intl']);

lazy('fetch', ['fetch']);

lazy('text', ['TextEncoder', 'TextDecoder']);

lazy('url-search-params', ['URLSearchParams']);

lazy('console', ['console']);

lazy('timers', ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval']);

lazy('crypto', ['crypto']);

lazy('hosts', ['addEventListener', 'removeEventListener', 'Deno', 'process']);

lazy('node-globals', ['Buffer', 'setImmediate', 'clearImmediate']);

// what node:crypto (the CLI bundles it from src/cli/node-compat/crypto.js) hashes with: Node's own
// createHash / createHmac, synchronous as Node's are
hide(G, '__nodeHash', function (algorithm, data, key) {
  var view = function (b) {
    return b instanceof ArrayBuffer ? b : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  };
  var out = host.hash(String(algorithm), view(data), key === undefined ? undefined : view(key));
  if (out === undefined) throw new Error('Digest method not supported');
  return new Uint8Array(out);
});

// Parts every instance had before they became chunks: the worker loads them into a spare instance
// when it has time to spare (src/sandbox/instances.ts), and not when cold starts queue up.
hide(G, '__preload', function () {
  ['url-search-params', 'console', 'timers', 'crypto'].forEach(loadChunk);
});

// The built-ins' locale methods answer as Node's do (QuickJS has no locale data).
var toLocale = function (method, args, locales, options) {
  loadChunk('intl');
  return provided.toLocale(method, args, locales, options);
};

hide(Number.prototype, 'toLocaleString', function (l, o) {
  return toLocale('number', [Number(this)], l, o);
});

hide(BigInt.prototype, 'toLocaleString', function (l, o) {
  return toLocale('number', [BigInt(this)], l, o);
});

hide(Date.prototype, 'toLocaleString', function (l, o) {
  return toLocale('date', [this], l, o);
});

hide(Date.prototype, 'toLocaleDateString', function (l, o) {
  return toLocale('dateOnly', [this], l, o);
});

hide(Date.prototype, 'toLocaleTimeString', function (l, o) {
  return toLocale('time', [this], l, o);
});

hide(String.prototype, 'localeCompare', function (that, l, o) {
  return toLocale('compare', [String(this), String(that)], l, o);
});

// A body may be a stream, a Blob or FormData only if app code made one, so their chunks are loaded by then.
export var isLoaded = function (chunk) {
  return loadedChunks[chunk] === 'loaded';
};

// Strings cross to and from the host as they are, but for those a C string cannot carry (a NUL,
// which would end it), which cross as JSON text (from the host behind U+0002, as `wire` sends them).
export var utf8 = function (s) {
  s = String(s);
  return new Uint8Array(
    s.indexOf('\0') < 0 ? host.utf8Encode(s) : host.utf8EncodeJson(JSON.stringify(s)),
  );
};

export var utf8Decode = function (buffer, fatal, ignoreBOM) {
  var s = host.utf8Decode(buffer, fatal, ignoreBOM);
  return s.charCodeAt(0) === 2 ? JSON.parse(s.slice(1)) : s;
};

export var bytesOf = function (v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v.slice(0));
  if (ArrayBuffer.isView(v))
    return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  return null;
};
