// @ts-check
/** URL and URLSearchParams over the host's own URL parser. */
import { hide, host, wire } from './head.js';
import { loadChunk, provided } from './lazy.js';

// A query with nothing to decode (no `%`, no `+`, no lone surrogate for UTF-8 to replace) splits
// here as the urlencoded parser would; anything else is Node's to parse (one host call).
export var queryPairs = function (s) {
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

/** @returns {import('../../host-api.ts').UrlParts} */
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

export class URL {
  constructor(url, base) {
    var parts = parseUrl(url, base);
    if (parts === undefined) throw new TypeError('Invalid URL: ' + String(url));
    /** @type {import('../../host-api.ts').UrlParts} */ this._p;
    /** @type {any} */ this._sp;
    hide(this, '_p', urlParts(parts));
    hide(this, '_sp', null);
  }
  static canParse(url, base) {
    return parseUrl(url, base) !== undefined;
  }
  static parse(url, base) {
    try {
      return newURL(url, base);
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

// Outside the class bodies on purpose: a bundled class that names itself inside its body is renamed
// there (`var X = class _X`), and its `name` with it (guest/build.ts).
function newURL(url, base) {
  return new URL(url, base);
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
