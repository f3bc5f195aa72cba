// Intl, answered by Node's own ICU through the host (src/sandbox/intl.ts): each object keeps its
// constructor arguments and asks for every format, so no locale data is loaded here and results
// are exactly Node's.

export default function install(platform) {
  const arg = (v) =>
    v instanceof Date ? { $date: v.getTime() } : typeof v === 'bigint' ? { $bigint: String(v) } : v;
  const ask = (req) => {
    const r = JSON.parse(platform.intl(JSON.stringify(req)));
    if (r.error)
      throw new (r.error.name === 'RangeError' ? RangeError : TypeError)(r.error.message);
    return r.value;
  };
  const locales = (l) =>
    l === undefined ? undefined : typeof l === 'string' ? l : Array.from(l, String);
  const options = (o) => (o === undefined ? undefined : { ...Object(o) });
  const ARGS = Symbol('args');

  function kind(name, methods, extra) {
    const C = function (l, o) {
      if (
        !new.target &&
        (name === 'DateTimeFormat' || name === 'NumberFormat' || name === 'Collator')
      )
        return new C(l, o);
      if (!new.target) throw new TypeError(`Intl.${name} must be called with new`);
      const a = { kind: name, locales: locales(l), options: options(o) };
      this[ARGS] = a;
      this._resolved = ask({ ...a, method: 'new' });
    };
    const call = (self, method, args) => ask({ ...self[ARGS], method, args: args.map(arg) });
    C.prototype.resolvedOptions = function () {
      return { ...this._resolved };
    };
    for (const m of methods)
      C.prototype[m] = function (...args) {
        return call(this, m, args);
      };
    if (extra) extra(C, call);
    C.supportedLocalesOf = (l, o) =>
      ask({ kind: name, locales: locales(l), options: options(o), method: 'supportedLocalesOf' });
    Object.defineProperty(C.prototype, Symbol.toStringTag, {
      value: `Intl.${name}`,
      configurable: true,
    });
    Object.defineProperty(C, 'name', { value: name });
    return C;
  }
  const bound = (C, name, method, map = (args) => args) =>
    Object.defineProperty(C.prototype, name, {
      configurable: true,
      get() {
        return (...args) => C.call$(this, method, map(args));
      },
    });

  const DateTimeFormat = kind(
    'DateTimeFormat',
    ['formatToParts', 'formatRange', 'formatRangeToParts'],
    (C, call) => {
      C.call$ = call;
      bound(C, 'format', 'format', (args) => [args[0] === undefined ? Date.now() : args[0]]);
    },
  );
  const NumberFormat = kind(
    'NumberFormat',
    ['formatToParts', 'formatRange', 'formatRangeToParts'],
    (C, call) => {
      C.call$ = call;
      bound(C, 'format', 'format');
    },
  );
  const Collator = kind('Collator', [], (C, call) => {
    C.call$ = call;
    bound(C, 'compare', 'compare', (args) => [String(args[0]), String(args[1])]);
  });
  const PluralRules = kind('PluralRules', ['select', 'selectRange']);
  const RelativeTimeFormat = kind('RelativeTimeFormat', ['format', 'formatToParts']);
  const ListFormat = kind('ListFormat', [], (C, call) => {
    C.prototype.format = function (list) {
      return call(this, 'format', [Array.from(list, String)]);
    };
    C.prototype.formatToParts = function (list) {
      return call(this, 'formatToParts', [Array.from(list, String)]);
    };
  });
  const DisplayNames = kind('DisplayNames', ['of']);
  const Segmenter = kind('Segmenter', [], (C, call) => {
    C.prototype.segment = function (input) {
      const text = String(input);
      const list = call(this, 'segment', [text]).map((s) => ({ ...s, input: text }));
      return {
        [Symbol.iterator]: () => list[Symbol.iterator](),
        containing: (i = 0) => list.find((s) => i >= s.index && i < s.index + s.segment.length),
      };
    };
  });

  const Intl = {
    DateTimeFormat,
    NumberFormat,
    Collator,
    PluralRules,
    RelativeTimeFormat,
    ListFormat,
    DisplayNames,
    Segmenter,
    getCanonicalLocales: (l) =>
      ask({ kind: 'getCanonicalLocales', method: '', args: [l === undefined ? [] : locales(l)] }),
    supportedValuesOf: (key) => ask({ kind: 'supportedValuesOf', method: '', args: [String(key)] }),
  };
  Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });
  platform.define('Intl', Intl);
  const local = (method, args, l, o) =>
    ask({
      kind: 'toLocale',
      method,
      args: args.map(arg),
      locales: locales(l),
      options: options(o),
    });
  platform.provide('toLocale', local);
}
