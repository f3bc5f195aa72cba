// URLSearchParams: a part of the prelude loaded on first use (the global, a URL's `searchParams`),
// so an instance that never touches a query does not compile it. Queries are split by the prelude's
// `queryPairs` (Node's parser for anything to decode) and serialised by the host.

/** @param {{ define: (name: string, value: unknown) => void, provide: (name: string, value: unknown) => void, internals: any }} platform */
export default function install(platform) {
  const { queryPairs, qsStringify, hide } = platform.internals;
  class URLSearchParams {
    constructor(init) {
      /** @type {[string, string][]} */ this._list;
      /** @type {any} */ this._url;
      hide(this, '_list', []);
      hide(this, '_url', null);
      if (init === undefined || init === null) return;
      if (typeof init === 'string') {
        this._list = queryPairs(init);
        return;
      }
      if (init instanceof URLSearchParams) {
        this._list = init._list.map((p) => [p[0], p[1]]);
        return;
      }
      if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const arr = Array.from(pair);
          if (arr.length !== 2)
            throw new TypeError('URLSearchParams: each pair must have two items');
          this._list.push([String(arr[0]), String(arr[1])]);
        }
        return;
      }
      for (const k of Object.keys(init)) this._list.push([k, String(init[k])]);
    }
    _update() {
      if (this._url) this._url._setSearch(this.toString());
    }
    get size() {
      return this._list.length;
    }
    append(n, v) {
      this._list.push([String(n), String(v)]);
      this._update();
    }
    delete(n, v) {
      n = String(n);
      this._list = this._list.filter(
        (p) => !(p[0] === n && (v === undefined || p[1] === String(v))),
      );
      this._update();
    }
    get(n) {
      n = String(n);
      for (const p of this._list) if (p[0] === n) return p[1];
      return null;
    }
    getAll(n) {
      n = String(n);
      return this._list.filter((p) => p[0] === n).map((p) => p[1]);
    }
    has(n, v) {
      n = String(n);
      return this._list.some((p) => p[0] === n && (v === undefined || p[1] === String(v)));
    }
    set(n, v) {
      n = String(n);
      v = String(v);
      const i = this._list.findIndex((p) => p[0] === n);
      if (i < 0) this._list.push([n, v]);
      else {
        this._list[i][1] = v;
        this._list = this._list.filter((p, j) => j <= i || p[0] !== n);
      }
      this._update();
    }
    sort() {
      this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this._update();
    }
    forEach(cb, thisArg) {
      for (const p of this._list.slice()) cb.call(thisArg, p[1], p[0], this);
    }
    keys() {
      return this._list.map((p) => p[0])[Symbol.iterator]();
    }
    values() {
      return this._list.map((p) => p[1])[Symbol.iterator]();
    }
    entries() {
      return this._list.map((p) => [p[0], p[1]])[Symbol.iterator]();
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return qsStringify(JSON.stringify(this._list));
    }
  }
  platform.provide('URLSearchParams', URLSearchParams);
  platform.define('URLSearchParams', URLSearchParams);
}
