// @ts-check
/** Headers. */
import { $immutable, $map } from './private.js';

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

/** The headers of `Response.error()` are immutable, as the fetch standard guards them. */
var immutable = function (h) {
  if (h[$immutable]) throw new TypeError('These headers are immutable');
};

export class Headers {
  constructor(init) {
    this[$map] = new Map();
    if (init === undefined || init === null) return;
    if (isHeaders(init)) {
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
    immutable(this);
    n = normName(n);
    var l = this[$map].get(n);
    if (l) l.push(normValue(v));
    else this[$map].set(n, [normValue(v)]);
  }
  set(n, v) {
    immutable(this);
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
    immutable(this);
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

// Outside the class bodies on purpose: a bundled class that names itself inside its body is renamed
// there (`var X = class _X`), and its `name` with it (guest/build.ts).
function isHeaders(v) {
  return v instanceof Headers;
}
