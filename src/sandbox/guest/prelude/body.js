// @ts-check
/** Bodies (what Request and Response share) and Request. */
import { G, hide, host } from './head.js';
import { bytesOf, isLoaded, loadChunk, provided, utf8, utf8Decode } from './lazy.js';
import { URL } from './url.js';
import {
  $bytes,
  $cf,
  $headerLines,
  $headers,
  $hostBody,
  $map,
  $method,
  $redirect,
  $signal,
  $source,
  $stream,
  $url,
  $used,
  $user,
} from './private.js';
import { Headers } from './headers.js';

// ---- Body, Request, Response ----------------------------------------------------------------
export var extract = function (body, headers) {
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
    // as the fetch standard says: a stream another reader holds, or one already read from, is no body
    if (body.locked || provided.isDisturbed(body))
      throw new TypeError('The body stream is locked or has been read from: it cannot be a body');
    var back = provided.takeBacking(body);
    return !back ? body : back.text !== undefined ? utf8(back.text) : back.bytes;
  }
  if (isLoaded('forms') && provided.isBlob(body)) {
    if (body.type && !headers.has('content-type')) headers.set('content-type', body.type);
    return provided.blobBytes(body).slice();
  }
  if (isLoaded('forms') && provided.isForm(body)) {
    var form = provided.encodeForm(body);
    // a Content-Type the caller set wins, as the fetch standard has it for every body
    if (!headers.has('content-type')) headers.set('content-type', form.type);
    return form.bytes;
  }
  // anything else is converted to a string, as WebIDL's USVString is, and is text like one
  var text = String(body);
  if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
  return utf8(text);
};

/** Sets a body from `extract`: bytes, or a stream read when the body is consumed. */
export var setBody = function (target, body) {
  if (body && !(body instanceof Uint8Array)) {
    target[$source] = body;
    target[$bytes] = null;
  } else target[$bytes] = body;
};

export var MAX_STREAM_BODY = 16 * 1024 * 1024;

/** A failed host read as the TypeError app code gets. */
export var fetchError = function (e) {
  var info;
  try {
    info = JSON.parse(e.message);
  } catch (_x) {
    info = { message: String(e?.message) };
  }
  return new TypeError(info.message);
};

export var BodyMixin = {
  _take: function () {
    if (disturbed(this) || this[$stream]?.locked || this[$source]?.locked)
      return Promise.reject(new TypeError('Body has already been consumed'));
    // a null body is read as empty and stays unused (the standard disturbs only a body's stream)
    if (!this[$hostBody] && !this[$source] && !this[$bytes])
      return Promise.resolve(new Uint8Array(0));
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

/** Whether the body was read from, whole or through its stream (the standard's "disturbed"). */
var disturbed = function (target) {
  if (target[$used]) return true;
  if (!isLoaded('streams')) return false;
  return (
    !!(target[$stream] && provided.isDisturbed(target[$stream])) ||
    !!(target[$source] && provided.isDisturbed(target[$source]))
  );
};

/** The body as a ReadableStream: the app's own stream, or one made (once) of the bytes. */
export var bodyStream = function (target, bytes) {
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
  if (target[$used] && !target[$stream]) {
    // read whole already: its stream is disturbed and locked, as the standard leaves it
    loadChunk('streams');
    var spent = new G.ReadableStream({
      start: function (c) {
        c.close();
      },
    });
    spent.getReader().read();
    target[$stream] = spent;
  }
  if (!target[$stream] && !bytes) return null;
  if (!target[$stream]) {
    loadChunk('streams');
    target[$stream] = provided.streamOf(bytes, { bytes: bytes });
  }
  return target[$stream];
};

export var mixBody = function (C) {
  for (var k of Object.keys(BodyMixin)) hide(C.prototype, k, BodyMixin[k]);
  Object.defineProperty(C.prototype, 'bodyUsed', {
    get: function () {
      return disturbed(this);
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
var FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
var METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// WebIDL: an init that is not an object (a string passed as the init) is a TypeError, as in
// workerd, Node and browsers, so a buggy handler fails loudly instead of answering 200 empty.
export var dictionary = function (init, what) {
  if (init === undefined || init === null) return {};
  if (typeof init !== 'object' && typeof init !== 'function')
    throw new TypeError("Failed to construct '" + what + "': the init argument is not an object");
  return init;
};

export class Request {
  constructor(input, init) {
    init = dictionary(init, 'Request');
    var src = isRequest(input) ? input : null;
    var url = src ? src.url : String(input);
    var parsed = new URL(url);
    var method = String(init.method !== undefined ? init.method : src ? src.method : 'GET');
    if (!METHOD_TOKEN.test(method)) throw new TypeError('Invalid request method: ' + method);
    if (FORBIDDEN_METHODS.indexOf(method.toUpperCase()) >= 0)
      throw new TypeError('Forbidden request method: ' + method);
    if (METHODS.indexOf(method.toUpperCase()) >= 0) method = method.toUpperCase();
    // RequestDuplex has one value; leaving it out with a stream body is allowed, as in workerd
    if (init.duplex !== undefined && init.duplex !== 'half')
      throw new TypeError('Request duplex must be "half"');
    this[$url] = parsed.toString();
    this[$method] = method;
    this[$headers] = new Headers(
      init.headers !== undefined ? init.headers : src ? src.headers : undefined,
    );
    if (
      src &&
      init.body === undefined &&
      (disturbed(src) || src[$stream]?.locked || src[$source]?.locked)
    )
      throw new TypeError('Cannot construct a Request from one whose body has been read or locked');
    // a body still on the host (a large upload, a fetched answer) becomes a stream the new request takes
    if (src && init.body === undefined && src[$hostBody]) bodyStream(src, null);
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
    // the new request takes the input's body: the input's is then used, as the standard has it
    if (src && init.body === undefined && body) src[$used] = true;
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
    var copy = newRequest(this);
    // made through the constructor, which takes the input's body: a clone leaves it unread
    this[$used] = false;
    if (this[$source]) {
      var two = provided.teeBody(this[$source]);
      this[$source] = two[0];
      copy[$source] = two[1];
    }
    return copy;
  }
}

mixBody(Request);
// WebIDL's class string ("[object Request]"), which also makes structuredClone refuse it
Object.defineProperty(Request.prototype, Symbol.toStringTag, {
  value: 'Request',
  configurable: true,
});

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
/** The header a trusted proxy puts the client's country in (the operator's setting, per instance). */
export function setCountryHeader(name) {
  countryHeader = name;
}

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

export var incomingRequest = function (url, method, headerLines, body, user) {
  var r = Object.create(Request.prototype);
  r[$url] = url;
  r[$method] = method;
  r[$headers] = null;
  r[$headerLines] = headerLines;
  // an empty incoming body is no body (a GET's, a POST with Content-Length: 0): `request.body` is null
  r[$bytes] = body === undefined || body.byteLength === 0 ? null : new Uint8Array(body);
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

// Outside the class bodies on purpose: a bundled class that names itself inside its body is renamed
// there (`var X = class _X`), and its `name` with it (guest/build.ts).
function isRequest(v) {
  return v instanceof Request;
}
function newRequest(input, init) {
  return new Request(input, init);
}
