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
    if (init === undefined) return;
    if ((typeof init !== 'object' && typeof init !== 'function') || init === null)
      throw new TypeError('Headers: the init must be an object, an array of pairs or Headers');
    if (isHeaders(init)) {
      for (var e of init[$map]) this[$map].set(e[0], e[1].slice());
      return;
    }
    var iterate = init[Symbol.iterator];
    if (iterate !== undefined) {
      if (typeof iterate !== 'function') throw new TypeError('Headers: init is not iterable');
      for (var pair of init) {
        if (typeof pair !== 'object' || pair === null)
          throw new TypeError('Headers: each pair must be a sequence');
        var arr = Array.from(pair);
        if (arr.length !== 2) throw new TypeError('Headers: each pair must have two items');
        this.append(arr[0], arr[1]);
      }
      return;
    }
    // a record, as WebIDL converts one: own keys in order, each read only if enumerable
    for (var k of Reflect.ownKeys(init)) {
      var d = Reflect.getOwnPropertyDescriptor(init, k);
      if (d === undefined || !d.enumerable) continue;
      if (typeof k === 'symbol') throw new TypeError('Headers: a header name cannot be a symbol');
      this.append(k, init[k]);
    }
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
  entries() {
    return headersIterator(this, 2);
  }
  keys() {
    return headersIterator(this, 0);
  }
  values() {
    return headersIterator(this, 1);
  }
  [Symbol.iterator]() {
    return headersIterator(this, 2);
  }
}

Object.defineProperty(Headers.prototype, Symbol.toStringTag, {
  value: 'Headers',
  configurable: true,
});

/** The sorted and combined pairs the standard iterates over. */
var sortedPairs = function (h) {
  var out = [];
  var names = Array.from(h[$map].keys()).sort();
  for (var n of names) {
    if (n === 'set-cookie') {
      for (var c of h[$map].get(n)) out.push([n, c]);
    } else out.push([n, h[$map].get(n).join(', ')]);
  }
  return out;
};

// A WebIDL pair iterator: its prototype's is %IteratorPrototype% (not a generator's), its tag
// "Headers Iterator"; each step reads the headers as they are then, at its index.
var $target = Symbol('target');
var $kind = Symbol('kind');
var $index = Symbol('index');
var HeadersIteratorPrototype = Object.create(
  Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
  {
    next: {
      configurable: true,
      enumerable: true,
      writable: true,
      value: function next() {
        if (!this || !(this[$target] instanceof Headers))
          throw new TypeError('next called on an object that is not a Headers iterator');
        var pairs = sortedPairs(this[$target]);
        var i = this[$index];
        if (i >= pairs.length) return { value: undefined, done: true };
        this[$index] = i + 1;
        var kind = this[$kind];
        return { value: kind === 2 ? pairs[i] : pairs[i][kind], done: false };
      },
    },
    [Symbol.toStringTag]: { configurable: true, value: 'Headers Iterator' },
  },
);

var headersIterator = function (h, kind) {
  var it = Object.create(HeadersIteratorPrototype);
  it[$target] = h;
  it[$kind] = kind;
  it[$index] = 0;
  return it;
};

// Outside the class bodies on purpose: a bundled class that names itself inside its body is renamed
// there (`var X = class _X`), and its `name` with it (guest/build.ts).
function isHeaders(v) {
  return v instanceof Headers;
}
