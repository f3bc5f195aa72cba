// @ts-check
// Guest prelude: evaluated as global code in every QuickJS context before the app's modules.
// It builds the web platform subset apps get (Headers, Request, Response, URL, atob, btoa; URLSearchParams,
// crypto, console, timers, fetch, TextEncoder and the rest as lazily loaded chunks) on top of `__host`, a small set
// of synchronous functions the worker provides (Node's own URL, UTF-8, base64 and crypto), then
// removes `__host` from the global scope. Nothing here can reach the network or file system.
/** @param {import('../host-api.ts').HostApi} host */ (function (host) {
  'use strict';
  var G = globalThis;
  var defineProperty = Object.defineProperty;
  var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  var hide = function (obj, name, value) {
    defineProperty(obj, name, {
      value: value,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  };

  // ---- lazily loaded parts -----------------------------------------------------------------------
  // Globals whose implementation is a bundled chunk (guest/chunks/*.js): the chunk is evaluated on
  // first touch of one of its globals (not billed to the app), then defines the real values.
  var loadedChunks = {};
  var provided = {};
  var platform = {
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
  var loadChunk = function (chunk) {
    if (loadedChunks[chunk]) return;
    loadedChunks[chunk] = 'loading';
    try {
      host.loadChunk(chunk)(platform);
    } finally {
      loadedChunks[chunk] = 'loaded';
    }
  };
  var lazy = function (chunk, names) {
    names.forEach(function (name) {
      defineProperty(G, name, {
        configurable: true,
        enumerable: false,
        get: function () {
          // a library feature-testing for the global while its own chunk loads finds none
          if (loadedChunks[chunk] === 'loading') return undefined;
          loadChunk(chunk);
          var d = getOwnPropertyDescriptor(G, name);
          if (!d || d.get) throw new Error('platform chunk ' + chunk + ' did not define ' + name);
          return d.value;
        },
        set: function (v) {
          hide(G, name, v);
        },
      });
    });
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
      return b instanceof ArrayBuffer
        ? b
        : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
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
  var isLoaded = function (chunk) {
    return loadedChunks[chunk] === 'loaded';
  };
  // Strings cross to and from the host as they are, but for those a C string cannot carry (a NUL,
  // which would end it), which cross as JSON text (from the host behind U+0002, as `wire` sends them).
  var utf8 = function (s) {
    s = String(s);
    return new Uint8Array(
      s.indexOf('\0') < 0 ? host.utf8Encode(s) : host.utf8EncodeJson(JSON.stringify(s)),
    );
  };
  var utf8Decode = function (buffer, fatal, ignoreBOM) {
    var s = host.utf8Decode(buffer, fatal, ignoreBOM);
    return s.charCodeAt(0) === 2 ? JSON.parse(s.slice(1)) : s;
  };
  var bytesOf = function (v) {
    if (v instanceof ArrayBuffer) return new Uint8Array(v.slice(0));
    if (ArrayBuffer.isView(v))
      return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
    return null;
  };

  // ---- URL / URLSearchParams ------------------------------------------------------------------
  // Strings enter the host as C strings, which end at a NUL and carry a lone surrogate as three
  // bytes: one holding either crosses as JSON behind U+0002 (the host's `text()` reads it back).
  var wire = function (s) {
    return /[\u0000\uD800-\uDFFF]/.test(s) || s.charCodeAt(0) === 2
      ? '\u0002' + JSON.stringify(s)
      : s;
  };
  // A query with nothing to decode (no `%`, no `+`, no lone surrogate for UTF-8 to replace) splits
  // here as the urlencoded parser would; anything else is Node's to parse (one host call).
  var queryPairs = function (s) {
    if (/[%+\uD800-\uDFFF]/.test(s)) return JSON.parse(host.qsParse(wire(s)));
    var parts = (s.charCodeAt(0) === 63 ? s.slice(1) : s).split('&');
    var out = [];
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i];
      if (p === '') continue;
      var eq = p.indexOf('=');
      out.push(eq < 0 ? [p, ''] : [p.slice(0, eq), p.slice(eq + 1)]);
    }
    return out;
  };
  var URL_PARTS = [
    'href',
    'origin',
    'protocol',
    'username',
    'password',
    'host',
    'hostname',
    'port',
    'pathname',
    'search',
    'hash',
  ];
  /** @returns {import('../host-api.ts').UrlParts} */
  var urlParts = function (joined) {
    var a = joined.split('\u0001');
    return {
      href: a[0],
      origin: a[1],
      protocol: a[2],
      username: a[3],
      password: a[4],
      host: a[5],
      hostname: a[6],
      port: a[7],
      pathname: a[8],
      search: a[9],
      hash: a[10],
    };
  };
  // without a base, one argument: the host then has no second value to inspect
  var parseUrl = function (url, base) {
    return base === undefined
      ? host.urlParse(wire(String(url)))
      : host.urlParse(wire(String(url)), wire(String(base)));
  };
  class URL {
    constructor(url, base) {
      var parts = parseUrl(url, base);
      if (parts === undefined) throw new TypeError('Invalid URL: ' + String(url));
      /** @type {import('../host-api.ts').UrlParts} */ this._p;
      /** @type {any} */ this._sp;
      hide(this, '_p', urlParts(parts));
      hide(this, '_sp', null);
    }
    static canParse(url, base) {
      return parseUrl(url, base) !== undefined;
    }
    static parse(url, base) {
      try {
        return new URL(url, base);
      } catch (_e) {
        return null;
      }
    }
    _set(part, value) {
      var parts = host.urlSet(this._p.href, part, wire(String(value)));
      if (parts !== undefined) this._p = urlParts(parts);
      if (part === 'search' || part === 'href') this._sp = null;
    }
    _setSearch(s) {
      this._set('search', s);
    }
    get searchParams() {
      if (!this._sp) {
        loadChunk('url-search-params');
        var sp = new provided.URLSearchParams(this._p.search);
        sp._url = this;
        hide(this, '_sp', sp);
      }
      return this._sp;
    }
    toString() {
      return this._p.href;
    }
    toJSON() {
      return this._p.href;
    }
  }
  URL_PARTS.forEach(function (part) {
    Object.defineProperty(URL.prototype, part, {
      get: function () {
        return this._p[part];
      },
      set:
        part === 'origin'
          ? undefined
          : function (v) {
              this._set(part, v);
            },
      enumerable: true,
      configurable: true,
    });
  });

  // ---- base64 (crypto, timers and console are chunks) ----------------------------------------
  var atob = function (s) {
    return JSON.parse(host.atob(wire(String(s))));
  };
  var btoa = function (s) {
    return host.btoa(JSON.stringify(String(s)));
  };

  // Internal slots of Headers, Request and Response: symbol keys stay out of Object.keys and JSON.stringify,
  // and cost a plain property store (defineProperty per slot was most of a Response's construction).
  var $map = Symbol('map'),
    $used = Symbol('used'),
    $bytes = Symbol('bytes'),
    $text = Symbol('text'),
    $url = Symbol('url'),
    $method = Symbol('method'),
    $headerLines = Symbol('headerLines'),
    $headers = Symbol('headers'),
    $signal = Symbol('signal'),
    $user = Symbol('user'),
    $cf = Symbol('cf'),
    $statusText = Symbol('statusText'),
    $status = Symbol('status'),
    $redirect = Symbol('redirect'),
    $redirected = Symbol('redirected'),
    $source = Symbol('source'),
    $stream = Symbol('stream'),
    $hostBody = Symbol('hostBody');

  // ---- Headers --------------------------------------------------------------------------------
  var TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
  // Raw name -> validated lowercase name: handlers use the same few names on every call.
  var NAMES = new Map();
  var normName = function (n) {
    n = String(n);
    var known = NAMES.get(n);
    if (known !== undefined) return known;
    if (!TOKEN.test(n)) throw new TypeError('Invalid header name: ' + n);
    var lower = n.toLowerCase();
    if (NAMES.size < 256) NAMES.set(n, lower);
    return lower;
  };
  // Leading or trailing whitespace, or a character no header value may hold: most values have none.
  var UNUSUAL_VALUE = /^[\t\n\r ]|[\t\n\r ]$|[\0\r\n]/;
  var normValue = function (v) {
    v = String(v);
    if (!UNUSUAL_VALUE.test(v)) return v;
    v = v.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    if (/[\0\r\n]/.test(v)) throw new TypeError('Invalid header value');
    return v;
  };
  class Headers {
    constructor(init) {
      this[$map] = new Map();
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        for (var e of init[$map]) this[$map].set(e[0], e[1].slice());
        return;
      }
      if (typeof init[Symbol.iterator] === 'function') {
        for (var pair of init) {
          var arr = Array.from(pair);
          if (arr.length !== 2) throw new TypeError('Headers: each pair must have two items');
          this.append(arr[0], arr[1]);
        }
        return;
      }
      for (var k of Object.keys(init)) this.append(k, init[k]);
    }
    append(n, v) {
      n = normName(n);
      var l = this[$map].get(n);
      if (l) l.push(normValue(v));
      else this[$map].set(n, [normValue(v)]);
    }
    set(n, v) {
      this[$map].set(normName(n), [normValue(v)]);
    }
    get(n) {
      var l = this[$map].get(normName(n));
      return l ? l.join(', ') : null;
    }
    getSetCookie() {
      return (this[$map].get('set-cookie') || []).slice();
    }
    has(n) {
      return this[$map].has(normName(n));
    }
    delete(n) {
      this[$map].delete(normName(n));
    }
    forEach(cb, thisArg) {
      for (var e of this.entries()) cb.call(thisArg, e[1], e[0], this);
    }
    *entries() {
      var names = Array.from(this[$map].keys()).sort();
      for (var n of names) {
        if (n === 'set-cookie') {
          for (var c of this[$map].get(n)) yield [n, c];
        } else yield [n, this[$map].get(n).join(', ')];
      }
    }
    *keys() {
      for (var e of this.entries()) yield e[0];
    }
    *values() {
      for (var e of this.entries()) yield e[1];
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }

  // ---- Body, Request, Response ----------------------------------------------------------------
  var extract = function (body, headers) {
    if (body === undefined || body === null) return null;
    if (typeof body === 'string') {
      if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
      return utf8(body);
    }
    if (isLoaded('url-search-params') && body instanceof provided.URLSearchParams) {
      if (!headers.has('content-type'))
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      return utf8(body.toString());
    }
    var b = bytesOf(body);
    if (b) return b;
    if (isLoaded('streams') && provided.isStream(body)) {
      var back = provided.takeBacking(body);
      return !back ? body : back.text !== undefined ? utf8(back.text) : back.bytes;
    }
    if (isLoaded('forms') && provided.isBlob(body)) {
      if (body.type && !headers.has('content-type')) headers.set('content-type', body.type);
      return provided.blobBytes(body).slice();
    }
    if (isLoaded('forms') && provided.isForm(body)) {
      var form = provided.encodeForm(body);
      headers.set('content-type', form.type);
      return form.bytes;
    }
    return utf8(String(body));
  };
  /** Sets a body from `extract`: bytes, or a stream read when the body is consumed. */
  var setBody = function (target, body) {
    if (body && !(body instanceof Uint8Array)) {
      target[$source] = body;
      target[$bytes] = null;
    } else target[$bytes] = body;
  };
  var MAX_STREAM_BODY = 16 * 1024 * 1024;
  /** A failed host read as the TypeError app code gets. */
  var fetchError = function (e) {
    var info;
    try {
      info = JSON.parse(e.message);
    } catch (_x) {
      info = { message: String(e?.message) };
    }
    return new TypeError(info.message);
  };
  var BodyMixin = {
    _take: function () {
      if (this[$used] || this[$stream]?.locked)
        return Promise.reject(new TypeError('Body has already been consumed'));
      this[$used] = true;
      if (this[$hostBody]) {
        var hostId = this[$hostBody];
        this[$hostBody] = undefined;
        return host.fetchRead(hostId, true).then(
          function (pair) {
            return new Uint8Array(pair[1]);
          },
          function (e) {
            throw fetchError(e);
          },
        );
      }
      if (this[$source]) return provided.readAll(this[$source], MAX_STREAM_BODY);
      return Promise.resolve(this[$bytes] || new Uint8Array(0));
    },
    arrayBuffer: function () {
      return this._take().then(function (b) {
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
      });
    },
    bytes: function () {
      return this._take().then(function (b) {
        return new Uint8Array(b);
      });
    },
    text: function () {
      return this._take().then(function (b) {
        return utf8Decode(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength), false, false);
      });
    },
    json: function () {
      return this.text().then(JSON.parse);
    },
    formData: function () {
      loadChunk('forms');
      var type = this.headers.get('content-type');
      return this._take().then(function (b) {
        return provided.parseForm(b, type);
      });
    },
    blob: function () {
      loadChunk('forms');
      var type = this.headers.get('content-type') || '';
      return this._take().then(function (b) {
        return provided.newBlob(b, type);
      });
    },
  };
  /** The body as a ReadableStream: the app's own stream, or one made (once) of the bytes. */
  var bodyStream = function (target, bytes) {
    if (target[$hostBody] && !target[$used]) {
      var hostId = target[$hostBody];
      target[$hostBody] = undefined;
      loadChunk('streams');
      target[$source] = new G.ReadableStream({
        pull: function (c) {
          return host.fetchRead(hostId, false).then(
            function (pair) {
              if (JSON.parse(pair[0]).done) c.close();
              else c.enqueue(new Uint8Array(pair[1]));
            },
            function (e) {
              throw fetchError(e);
            },
          );
        },
        cancel: function () {
          host.fetchAbort(hostId);
        },
      });
    }
    if (target[$source]) return target[$source];
    if (!bytes?.length) return null;
    if (!target[$stream]) {
      loadChunk('streams');
      target[$stream] = provided.streamOf(bytes, { bytes: bytes });
    }
    return target[$stream];
  };
  var mixBody = function (C) {
    for (var k of Object.keys(BodyMixin)) hide(C.prototype, k, BodyMixin[k]);
    Object.defineProperty(C.prototype, 'bodyUsed', {
      get: function () {
        return !!this[$used];
      },
      configurable: true,
    });
    Object.defineProperty(C.prototype, 'body', {
      get: function () {
        return bodyStream(this, this[$bytes]);
      },
      configurable: true,
    });
  };

  var METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH'];
  // WebIDL: an init that is not an object (a string passed as the init) is a TypeError, as in
  // workerd, Node and browsers, so a buggy handler fails loudly instead of answering 200 empty.
  var dictionary = function (init, what) {
    if (init === undefined || init === null) return {};
    if (typeof init !== 'object' && typeof init !== 'function')
      throw new TypeError("Failed to construct '" + what + "': the init argument is not an object");
    return init;
  };
  class Request {
    constructor(input, init) {
      init = dictionary(init, 'Request');
      var src = input instanceof Request ? input : null;
      var url = src ? src.url : String(input);
      var parsed = new URL(url);
      var method = String(init.method || (src ? src.method : 'GET'));
      if (METHODS.indexOf(method.toUpperCase()) >= 0) method = method.toUpperCase();
      this[$url] = parsed.toString();
      this[$method] = method;
      this[$headers] = new Headers(
        init.headers !== undefined ? init.headers : src ? src.headers : undefined,
      );
      var body =
        init.body !== undefined
          ? extract(init.body, this[$headers])
          : src
            ? src[$source] || src[$bytes]
            : null;
      if (body && (method === 'GET' || method === 'HEAD'))
        throw new TypeError('Request with GET/HEAD method cannot have body');
      setBody(this, body);
      this[$used] = false;
      this[$signal] = init.signal ||
        (src ? src.signal : null) || {
          aborted: false,
          addEventListener: function () {},
          removeEventListener: function () {},
        };
      var redirect =
        init.redirect !== undefined ? String(init.redirect) : src ? src.redirect : 'follow';
      if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error')
        throw new TypeError('Request redirect must be follow, manual or error');
      this[$redirect] = redirect;
      if (init.cf !== undefined) this[$cf] = init.cf;
      else if (src) this[$cf] = src[$cf];
    }
    get url() {
      return this[$url];
    }
    get method() {
      return this[$method];
    }
    get headers() {
      if (this[$headers] === null) this[$headers] = headersFromLines(this[$headerLines]);
      return this[$headers];
    }
    get signal() {
      return this[$signal];
    }
    get redirect() {
      return this[$redirect] || 'follow';
    }
    /** Workers' request metadata: an incoming request's is INCOMING_CF (with the country a trusted proxy's header gives); one app code makes has its init's `cf`. */
    get cf() {
      if (this[$cf] === INCOMING_CF && countryHeader) {
        var country = this.headers.get(countryHeader);
        if (country)
          this[$cf] = Object.freeze(
            Object.assign({}, INCOMING_CF, { country: country.toUpperCase() }),
          );
      }
      return this[$cf];
    }
    clone() {
      if (this[$used]) throw new TypeError('Body has already been consumed');
      var copy = new Request(this);
      if (this[$source]) {
        var two = this[$source].tee();
        this[$source] = two[0];
        copy[$source] = two[1];
      }
      return copy;
    }
  }
  mixBody(Request);

  var NOOP_SIGNAL = Object.freeze({
    aborted: false,
    reason: undefined,
    addEventListener: function () {},
    removeEventListener: function () {},
    throwIfAborted: function () {},
  });
  // The host hands over an already parsed, normalised request: build it without re-validating.
  // Its headers arrive as text (name and value on lines of their own) and become a Headers object only if the handler reads them.
  // What Workers code reads from request.cf, as far as this platform knows it: nothing about the
  // visitor's network or place (no edge stands in front), so those are undefined, not made up.
  var countryHeader = null;
  var INCOMING_CF = Object.freeze({
    asn: undefined,
    asOrganization: undefined,
    colo: undefined,
    country: undefined,
    city: undefined,
    continent: undefined,
    region: undefined,
    regionCode: undefined,
    postalCode: undefined,
    timezone: undefined,
    latitude: undefined,
    longitude: undefined,
    httpProtocol: 'HTTP/1.1',
    tlsVersion: undefined,
    clientTcpRtt: undefined,
  });
  var incomingRequest = function (url, method, headerLines, body, user) {
    var r = Object.create(Request.prototype);
    r[$url] = url;
    r[$method] = method;
    r[$headers] = null;
    r[$headerLines] = headerLines;
    r[$bytes] = body === undefined ? null : new Uint8Array(body);
    r[$used] = false;
    r[$signal] = NOOP_SIGNAL;
    r[$cf] = INCOMING_CF;
    r[$user] = user
      ? Object.freeze({
          id: user.id,
          email: user.email,
          roles: Object.freeze(user.roles.slice()),
          verified: user.verified,
        })
      : null;
    return r;
  };
  // "name\nvalue\nname\nvalue": split is native in QuickJS, JSON.parse of the same pairs ~1.5x slower
  var headersFromLines = function (text) {
    var h = Object.create(Headers.prototype);
    var m = new Map();
    var a = text === '' ? [] : text.split('\n');
    for (var i = 0; i + 1 < a.length; i += 2) {
      var l = m.get(a[i]);
      if (l) l.push(a[i + 1]);
      else m.set(a[i], [a[i + 1]]);
    }
    h[$map] = m;
    return h;
  };

  class Response {
    constructor(body, init) {
      init = dictionary(init, 'Response');
      var status = init.status === undefined ? 200 : Number(init.status);
      if (!(status >= 200 && status <= 599) || Math.floor(status) !== status)
        throw new RangeError('Response status must be an integer from 200 to 599');
      this[$status] = status;
      // '' unless given, as the fetch standard (and Node, Deno, browsers) have it: the reason phrase is not the app's
      this[$statusText] = init.statusText !== undefined ? String(init.statusText) : '';
      this[$headers] = new Headers(init.headers);
      if (typeof body === 'string') {
        // Kept as text: most handlers answer strings, and the host encodes them natively.
        if (!this[$headers].has('content-type'))
          this[$headers].set('content-type', 'text/plain;charset=UTF-8');
        this[$text] = body;
        this[$bytes] = null;
      } else {
        // a text response's unread `.body` (Hono's re-wrap) stays text
        var back =
          body && isLoaded('streams') && provided.isStream(body)
            ? provided.takeBacking(body)
            : null;
        if (back && back.text !== undefined) {
          this[$text] = back.text;
          this[$bytes] = null;
        } else setBody(this, back ? back.bytes : extract(body, this[$headers]));
      }
      this[$used] = false;
    }
    static json(data, init) {
      var text = JSON.stringify(data);
      // as the standard says: a value JSON cannot represent (undefined, a function) is an error, not an empty body
      if (text === undefined)
        throw new TypeError('Response.json: the value cannot be serialized as JSON');
      // the init's headers are read once (building them first and passing them on copied them a second time)
      var res = new Response(null, init);
      if (!res[$headers].has('content-type')) res[$headers].set('content-type', 'application/json');
      res[$text] = text;
      return res;
    }
    static redirect(url, status) {
      status = status === undefined ? 302 : status;
      if ([301, 302, 303, 307, 308].indexOf(status) < 0)
        throw new RangeError('Invalid redirect status');
      return new Response(null, { status: status, headers: { location: new URL(url).toString() } });
    }
    static error() {
      return new Response(null, { status: 500 });
    }
    get status() {
      return this[$status];
    }
    get statusText() {
      return this[$statusText];
    }
    get ok() {
      return this[$status] >= 200 && this[$status] < 300;
    }
    get headers() {
      return this[$headers];
    }
    get redirected() {
      return !!this[$redirected];
    }
    get type() {
      return 'default';
    }
    get url() {
      return this[$url] || '';
    }
    clone() {
      if (this[$used]) throw new TypeError('Body has already been consumed');
      if (this[$hostBody]) bodyStream(this, null); // a fetched body becomes a stream, which tees
      var body = this[$text] !== undefined ? this[$text] : this[$bytes];
      if (this[$source]) {
        var two = this[$source].tee();
        this[$source] = two[0];
        body = two[1];
      }
      var copy = new Response(body, {
        status: this[$status],
        statusText: this[$statusText],
        headers: this[$headers],
      });
      copy[$url] = this[$url];
      copy[$redirected] = this[$redirected];
      return copy;
    }
  }
  mixBody(Response);
  // Text bodies are encoded only when app code reads them back.
  var takeBytes = BodyMixin._take;
  hide(Response.prototype, '_take', function () {
    if (this[$text] !== undefined && this[$bytes] === null && !this[$used])
      this[$bytes] = utf8(this[$text]);
    return takeBytes.call(this);
  });
  Object.defineProperty(Response.prototype, 'body', {
    get: function () {
      var text = this[$text];
      if (text === undefined || this[$bytes] !== null || this[$source])
        return bodyStream(this, this[$bytes]);
      // encoded only if the stream is read: a Response made of it takes the text
      if (!text.length) return null;
      if (!this[$stream]) {
        loadChunk('streams');
        this[$stream] = provided.streamOf(
          function () {
            return utf8(text);
          },
          { text: text },
        );
      }
      return this[$stream];
    },
    configurable: true,
  });

  // ---- streams the host reads from the guest (fetch is in guest/chunks/fetch.js) ---------------
  // Streams the host reads from the guest, one chunk per pull: `{done}` or `{done: false, value: ArrayBuffer}`.
  var chunkBytes = function (v) {
    if (typeof v === 'string') return utf8(v);
    var b = bytesOf(v);
    if (!b) throw new TypeError('a body stream must yield Uint8Array chunks (or strings)');
    return b;
  };
  var pullFrom = function (readers, id) {
    var reader = readers.get(id);
    if (!reader) return Promise.resolve({ done: true });
    return reader.read().then(function (r) {
      if (r.done) {
        readers.delete(id);
        return { done: true };
      }
      var b = chunkBytes(r.value);
      return { done: false, value: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) };
    });
  };
  // ---- globals --------------------------------------------------------------------------------
  var globals = {
    URL: URL,
    Headers: Headers,
    Request: Request,
    Response: Response,
    atob: atob,
    btoa: btoa,
    queueMicrotask: function (fn) {
      if (typeof fn !== 'function')
        throw new TypeError('queueMicrotask: the callback must be a function');
      Promise.resolve().then(function () {
        fn();
      });
    },
    performance: {
      now: function () {
        return host.now();
      },
      timeOrigin: Date.now(),
    },
    navigator: { userAgent: 'platform-runtime' },
    self: G,
    reportError: function (e) {
      loadChunk('console');
      provided.console.error(e);
    },
  };
  for (var name of Object.keys(globals)) hide(G, name, globals[name]);
  platform.internals = {
    Request: Request,
    Response: Response,
    $url: $url,
    $redirected: $redirected,
    $hostBody: $hostBody,
    $source: $source,
    $used: $used,
    $bytes: $bytes,
    utf8: utf8,
    utf8Decode: utf8Decode,
    bytesOf: bytesOf,
    atob: atob,
    fetchError: fetchError,
    pullFrom: pullFrom,
    queryPairs: queryPairs,
    qsStringify: host.qsStringify,
    hide: hide,
    hostConsole: host.console,
    setTimer: host.setTimer,
    clearTimer: host.clearTimer,
    randomBytes: host.randomBytes,
    randomUUID: host.randomUUID,
    subtle: function () {
      loadChunk('subtle');
      return provided.subtle;
    },
    fetch: function (id, json, body) {
      return host.fetch(id, json, body);
    },
    fetchAbort: function (id) {
      host.fetchAbort(id);
    },
  };

  // ---- dispatch: called by the worker for each invocation ------------------------------------
  var freezeDeep = function (o) {
    Object.freeze(o);
    for (var k of Object.keys(o)) if (o[k] && typeof o[k] === 'object') freezeDeep(o[k]);
    return o;
  };
  var logFn = function (level) {
    return function (m, md) {
      host.log(level, wire(String(m)), md === undefined ? undefined : JSON.stringify(md));
    };
  };
  // Asynchronous platform calls: a failure arrives as an Error with a stable `code`.
  var hostCall = function (method, args, bytes) {
    return host.call(method, JSON.stringify(args), bytes).then(JSON.parse, function (e) {
      var info;
      try {
        info = JSON.parse(e.message);
      } catch (_x) {
        info = { code: 'internal_error', message: String(e?.message) };
      }
      var err = new Error(info.message);
      Object.assign(err, { name: 'PlatformError', code: info.code });
      throw err;
    });
  };
  var binaryBytes = function (binary) {
    var out = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  };
  // The Cache API as Workers offer it (`caches.default`, `caches.open(name)`): responses kept by the
  // origin's shared cache for this app, by their own Cache-Control, one namespace per name.
  /** `fn` with the request `input` names; a promise rejected with the constructor's error when it names none. */
  var withRequest = function (input, fn) {
    try {
      var req = input instanceof Request ? input : new Request(input);
    } catch (e) {
      return Promise.reject(e);
    }
    return fn(req);
  };
  var headerPairs = function (headers) {
    var out = [];
    headers.forEach(function (v, k) {
      out.push([k, v]);
    });
    return out;
  };
  var makeCache = function (name) {
    return Object.freeze({
      match: function (input, options) {
        return withRequest(input, function (req) {
          if (req.method !== 'GET' && !options?.ignoreMethod) return Promise.resolve(undefined);
          var args = [name, req.url, headerPairs(req.headers)];
          return hostCall('cache.match', args).then(function (a) {
            if (!a) return undefined;
            var body = a.base64 ? binaryBytes(atob(a.base64)) : null;
            return new Response(body, { status: a.status, headers: a.headers });
          });
        });
      },
      put: function (input, response) {
        return withRequest(input, function (req) {
          var refuse = function (why) {
            return Promise.reject(new TypeError('Cache.put: ' + why));
          };
          if (req.method !== 'GET') return refuse('only GET requests can be cached');
          if (!(response instanceof Response))
            return refuse('the second argument must be a Response');
          if (response.status === 206) return refuse('a partial response (206) cannot be cached');
          var vary = response.headers.get('vary') || '';
          if (/(^|,)\s*\*\s*(,|$)/.test(vary))
            return refuse("a response with 'Vary: *' cannot be cached");
          // the prelude's own Response type is partial: the full class comes with the fetch chunk
          var full = /** @type {any} */ (response);
          if (full.bodyUsed) return refuse('the response body was already used');
          return full.arrayBuffer().then(function (body) {
            var args = [name, req.url, headerPairs(req.headers), response.status];
            args.push(headerPairs(response.headers));
            return hostCall('cache.put', args, body).then(function () {
              return undefined;
            });
          });
        });
      },
      delete: function (input, options) {
        return withRequest(input, function (req) {
          if (req.method !== 'GET' && !options?.ignoreMethod) return Promise.resolve(false);
          return hostCall('cache.delete', [name, req.url]);
        });
      },
    });
  };
  var defaultCache = null;
  hide(
    G,
    'caches',
    Object.freeze({
      get default() {
        return defaultCache || (defaultCache = makeCache(''));
      },
      open: function (cacheName) {
        return Promise.resolve(makeCache('named:' + String(cacheName)));
      },
    }),
  );
  var ctx = null;
  var SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
  // Called once per instance: ctx is the same object for every call (host functions know the current call).
  var authError = function (status, code, message) {
    return Object.assign(new Error(message), { name: 'AuthError', status: status, code: code });
  };
  var currentUser = function (request) {
    return request instanceof Request && request[$user] ? request[$user] : null;
  };
  hide(G, '__setApp', function (appJson, flagsJson) {
    var flags = JSON.parse(flagsJson || '{}');
    countryHeader = flags.countryHeader || null;
    var extra = {};
    var publicStores = flags.publicStores || [];
    // An upload's bytes cross to the host as one ArrayBuffer (never as base64 or JSON): a string is
    // its UTF-8, a typed array or ArrayBuffer its bytes (copied only when a view covers part of its
    // buffer), a Blob or File its contents, with its name and type (else application/octet-stream) as
    // the options' defaults.
    var uploadBytes = function (data) {
      if (typeof data === 'string') return utf8(data).buffer;
      if (data instanceof ArrayBuffer) return data;
      if (ArrayBuffer.isView(data))
        return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength
          ? data.buffer
          : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
      return null;
    };
    var isBlob = function (data) {
      return (
        data !== null &&
        typeof data === 'object' &&
        typeof data.arrayBuffer === 'function' &&
        typeof data.type === 'string' &&
        typeof data.size === 'number'
      );
    };
    extra.files = Object.freeze({
      store: function (name) {
        name = String(name);
        return Object.freeze({
          createUpload: function (data, options) {
            var opts = options || {};
            if (isBlob(data)) {
              var defaults = {
                content_type: data.type || 'application/octet-stream',
                filename: typeof data.name === 'string' && data.name ? data.name : undefined,
              };
              var given = {};
              for (var k in opts) given[k] = opts[k];
              if (given.filename === undefined) given.filename = defaults.filename;
              if (given.content_type === undefined) given.content_type = defaults.content_type;
              return Promise.resolve(data.arrayBuffer()).then(function (ab) {
                return hostCall('files.upload', [name, given], ab);
              });
            }
            var bytes = uploadBytes(data);
            if (!bytes)
              return Promise.reject(
                new TypeError(
                  'createUpload: bytes must be a string, an ArrayBuffer, a typed array or a Blob',
                ),
              );
            return hostCall('files.upload', [name, opts], bytes);
          },
          getPublicUrl: function (fileId) {
            if (publicStores.indexOf(name) < 0) {
              throw Object.assign(
                new Error('Store ' + name + ' is private; use createSignedUrl()'),
                { name: 'PlatformError', code: 'store_not_public' },
              );
            }
            return (
              ctx.app.origin + '/_platform/files/' + name + '/' + encodeURIComponent(String(fileId))
            );
          },
          createSignedUrl: function (fileId, options) {
            return hostCall('files.signedUrl', [name, String(fileId), options || {}]).then(
              function (r) {
                return r.url;
              },
            );
          },
          delete: function (fileId) {
            return hostCall('files.delete', [name, String(fileId)]);
          },
        });
      },
    });
    if (flags.appUsers) {
      // ctx.auth exists only when the release declares auth.mode app_users.
      extra.auth = Object.freeze({
        currentUser: currentUser,
        requireRole: function (request, role) {
          var u = currentUser(request);
          if (!u) throw authError(401, 'unauthenticated', 'Sign in first.');
          if (u.roles.indexOf(String(role)) < 0)
            throw authError(403, 'forbidden', 'This needs the role ' + String(role) + '.');
          return u;
        },
      });
    }
    ctx = Object.freeze(
      Object.assign(
        {
          app: freezeDeep(JSON.parse(appJson)),
          secrets: Object.freeze({
            get: platform.secret,
            require: function (name) {
              var raw = host.secret(wire(String(name)));
              var v = raw === undefined ? undefined : JSON.parse(raw);
              if (v === undefined) throw new Error('Secret ' + String(name) + ' is not set');
              return v;
            },
          }),
          log: Object.freeze({
            debug: logFn('debug'),
            info: logFn('info'),
            warn: logFn('warn'),
            error: logFn('error'),
          }),
          data: Object.freeze({
            collection: function (name) {
              name = String(name);
              return Object.freeze({
                create: function (fields) {
                  return hostCall('data.create', [name, fields === undefined ? {} : fields]);
                },
                update: function (id, fields) {
                  return hostCall('data.update', [
                    name,
                    String(id),
                    fields === undefined ? {} : fields,
                  ]);
                },
                get: function (id) {
                  return hostCall('data.get', [name, String(id)]);
                },
                delete: function (id) {
                  return hostCall('data.delete', [name, String(id)]);
                },
                list: function (options) {
                  return hostCall('data.list', [name, options === undefined ? {} : options]);
                },
              });
            },
          }),
          // The release's static files, as Workers' ASSETS binding gives them (env.ASSETS works too)
          assets: Object.freeze({
            fetch: function (input, init) {
              var req = input instanceof Request ? input : new Request(input, init);
              var m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(String(req.url));
              return hostCall('assets.fetch', [m?.[1] || '/', req.method]).then(function (a) {
                var body =
                  a.text !== null ? a.text : a.base64 !== null ? binaryBytes(atob(a.base64)) : null;
                return new Response(body, { status: a.status, headers: a.headers });
              });
            },
          }),
          jobs: Object.freeze({
            enqueue: function (jobName, payload, options) {
              return hostCall('jobs.enqueue', [
                String(jobName),
                payload === undefined ? null : payload,
                options || {},
              ]);
            },
          }),
        },
        extra,
      ),
    );
    // A Workers app reads its configuration as env.NAME (Hono: c.env.NAME): ctx is passed where env
    // is, and an uppercase name that is not a ctx member reads the secret of that name.
    var members = ctx;
    ctx = new Proxy(members, {
      get: function (t, k) {
        if (typeof k !== 'string' || k in t || !SECRET_NAME.test(k)) return t[k];
        if (k === 'ASSETS') return t.assets;
        return platform.secret(k);
      },
    });
  });
  // Streamed answers being sent: the host pulls each chunk (`__pull`) as the visitor takes it.
  var outStreams = new Map();
  var nextOutStream = 1;
  hide(G, '__pull', function (id) {
    return pullFrom(outStreams, id);
  });
  hide(G, '__cancel', function (id) {
    var reader = outStreams.get(id);
    outStreams.delete(id);
    return reader
      ? reader.cancel(new DOMException('The visitor went away', 'AbortError'))
      : undefined;
  });
  var toResult = function (res, stream) {
    if (!(res instanceof Response))
      throw new TypeError(
        'fetch() must return a Response (got ' + (res === null ? 'null' : typeof res) + ')',
      );
    if (res[$hostBody]) bodyStream(res, null); // a fetched response passed on streams through
    if (res[$source] && !stream) {
      // where the answer cannot stream (a webhook's), the stream is read to its end first
      var source = res[$source];
      res[$source] = null;
      return provided.readAll(source, MAX_STREAM_BODY).then(function (b) {
        res[$bytes] = b;
        return toResult(res);
      });
    }
    // The head as lines: status, the number of headers, then each name and value on a line of its own
    // (header values never hold a line break). Built by concatenation: JSON.stringify of the same
    // object costs QuickJS more. Straight from the header map (the host does not need them
    // sorted); set-cookie stays one entry each.
    var lines = '';
    var n = 0;
    for (var e of res[$headers][$map]) {
      if (e[0] === 'set-cookie')
        for (var i = 0; i < e[1].length; i++, n++) lines += '\n' + e[0] + '\n' + e[1][i];
      else {
        lines += '\n' + e[0] + '\n' + (e[1].length === 1 ? e[1][0] : e[1].join(', '));
        n++;
      }
    }
    // the status as the app's Response reports it (a subclass may say anything): the host refuses what is not a number in range
    var status = res.status;
    var meta = (typeof status === 'number' ? status : NaN) + '\n' + n + lines;
    if (res[$source]) {
      var id = nextOutStream++;
      outStreams.set(id, res[$source].getReader());
      res[$source] = null;
      res[$used] = true;
      return { meta: meta, stream: id };
    }
    // A text answer crosses as one string, the head then the text (one read for the host), unless
    // the text holds a NUL, which the host's read of a C string would cut short: then as bytes.
    var text = res[$bytes] === null ? res[$text] : undefined;
    if (text !== undefined && text.indexOf('\0') < 0) return meta + '\n' + text;
    var bytes = text !== undefined ? utf8(text) : res[$bytes];
    return {
      meta: meta,
      body: bytes
        ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
        : undefined,
    };
  };
  // ---- entry shapes: what a module offers, whatever host it was written for ----------------------
  // `export default { fetch, job, webhook }` as the contract has it; a default function (Val Town,
  // Netlify) for requests and jobs; Workers' `scheduled(controller, env, ctx)` for jobs; the
  // service-worker `addEventListener('fetch' | 'scheduled')`; `Deno.serve(handler)`.
  var scheduledController = function (event) {
    return {
      type: 'scheduled',
      cron: '',
      scheduledTime: Date.parse(event?.scheduled_for) || Date.now(),
      noRetry: function () {},
    };
  };
  hide(G, '__handlersOf', function (ns) {
    var d = ns ? ns.default : undefined;
    var h;
    if (typeof d === 'function') h = { fetch: d, job: d };
    else if (d !== null && typeof d === 'object') h = d;
    else h = {};
    var entry = loadedChunks.hosts ? platform.internals.entry : null;
    /** @type {Record<string, Function>} */
    var add = {};
    if (typeof h.fetch !== 'function' && entry && entry.fetch.length) {
      add.fetch = function (request, _ctx, exec) {
        var responded = null;
        var event = {
          type: 'fetch',
          request: request,
          respondWith: function (r) {
            if (responded)
              throw new DOMException('respondWith() was already called', 'InvalidStateError');
            responded = Promise.resolve(r);
          },
          waitUntil: function (p) {
            exec.waitUntil(p);
          },
          passThroughOnException: function () {},
        };
        for (var i = 0; i < entry.fetch.length; i++) entry.fetch[i](event);
        if (!responded) throw new Error('No fetch listener called event.respondWith()');
        return responded;
      };
    } else if (typeof h.fetch !== 'function' && entry && entry.serve) {
      add.fetch = function (request) {
        return entry.serve(request, { remoteAddr: { transport: 'tcp', hostname: '', port: 0 } });
      };
    }
    if (typeof h.job !== 'function' && typeof h.scheduled === 'function') {
      add.job = function (event, c, exec) {
        return h.scheduled(scheduledController(event), c, exec);
      };
    } else if (typeof h.job !== 'function' && entry && entry.scheduled.length) {
      add.job = function (event, _c, exec) {
        var e = scheduledController(event);
        e.waitUntil = function (p) {
          exec.waitUntil(p);
        };
        for (var i = 0; i < entry.scheduled.length; i++) entry.scheduled[i](e);
      };
    }
    var names = Object.keys(add);
    if (!names.length) return h;
    var out = Object.create(h);
    names.forEach(function (n) {
      hide(out, n, add[n]);
    });
    return out;
  });
  // Workers' third argument: waitUntil's promises settle before the answer is sent (they run within
  // the call's limits); there is no origin to pass through to. Methods on a prototype and the list
  // made on first use: a call that never waits pays one small object.
  function ExecutionContext() {
    this.pending = null;
    this.props = {};
  }
  ExecutionContext.prototype.waitUntil = function (p) {
    (this.pending || (this.pending = [])).push(
      Promise.resolve(p).then(undefined, function (e) {
        console.error('waitUntil:', e);
      }),
    );
  };
  ExecutionContext.prototype.passThroughOnException = function () {};
  var settled = function (exec, value) {
    return exec.pending
      ? Promise.all(exec.pending).then(function () {
          return value;
        })
      : value;
  };
  hide(G, '__dispatch', function (handlers, kind, input, body) {
    if (!handlers || typeof handlers[kind] !== 'function') return { missing: true };
    var exec = new ExecutionContext();
    if (kind === 'job') {
      // job(event, ctx): the result is not used; finishing (or throwing) is the outcome.
      return Promise.resolve(handlers.job(JSON.parse(input), ctx, exec)).then(function () {
        return settled(exec, { meta: '200\n0' });
      });
    }
    if (kind === 'webhook') {
      return Promise.resolve(handlers.webhook(JSON.parse(input), ctx, exec))
        .then(function (res) {
          return settled(exec, res);
        })
        .then(function (res) {
          return res === undefined ? { meta: '200\n0' } : toResult(res);
        });
    }
    // "method\nurl\nuser JSON or nothing\nheader lines" (none of them holds a line break; see the host's requestInput)
    var a = input.indexOf('\n'),
      b = input.indexOf('\n', a + 1),
      c = input.indexOf('\n', b + 1);
    var user = c === b + 1 ? null : JSON.parse(input.slice(b + 1, c));
    var req = incomingRequest(
      input.slice(a + 1, b),
      input.slice(0, a),
      input.slice(c + 1),
      body,
      user,
    );
    var res = handlers[kind](req, ctx, exec);
    // A handler that answers synchronously is answered without a promise round trip.
    if (res instanceof Response && !exec.pending) return toResult(res, true);
    return Promise.resolve(res).then(function (r) {
      return exec.pending
        ? settled(exec, r).then(function (v) {
            return toResult(v, true);
          })
        : toResult(r, true);
    });
  });
})(globalThis.__host);
delete globalThis.__host;
