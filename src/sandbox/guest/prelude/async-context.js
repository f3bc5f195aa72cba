// @ts-check
/**
 * Async context and Node's AsyncLocalStorage on it. On the platform's own engine
 * (engine/patches/0001-async-context.patch) the engine keeps one "current" value that every job
 * and promise reaction captures when it is made (`then`, `await`) and restores when it runs, and
 * every call from the host starts without one; the prelude adds timers (chunks/timers.js). On the
 * stock engine the value is a plain variable: a store holds during `run()`'s synchronous part only.
 *
 * The value is an immutable list of frames `{ key, value, up }`: each AsyncLocalStorage is a key.
 * `node:async_hooks` as the CLI bundles it (src/cli/node-compat/async-hooks.js) is this module's
 * AsyncLocalStorage and AsyncResource, reached through a symbol on the global object.
 */
import { G, hide } from './head.js';

var engine = G.__asyncContext;
delete G.__asyncContext;
var plain;
/** @type {{ get(): any, set(v: any): any }} */
var current = engine || {
  get: function () {
    return plain;
  },
  set: function (v) {
    var previous = plain;
    plain = v;
    return previous;
  },
};
export var engineTracksAsyncContext = !!engine;

export var snapshot = function () {
  return current.get();
};

/** Runs fn(...args) with `snap` as the async context, then puts the one before back. */
export var runInSnapshot = function (snap, fn, thisArg, args) {
  var previous = current.set(snap);
  try {
    return fn.apply(thisArg, args || []);
  } finally {
    current.set(previous);
  }
};

/** Runs fn with `key` bound to `value` in the async context. */
export var runWith = function (key, value, fn, thisArg, args) {
  return runInSnapshot({ key: key, value: value, up: current.get() }, fn, thisArg, args);
};

var NOT_FOUND = {};
/** The value `key` is bound to in the current async context, or `fallback`. */
export var lookup = function (key, fallback) {
  for (var f = current.get(); f; f = f.up) if (f.key === key) return f.value;
  return fallback;
};

var EXITED = {};

class AsyncLocalStorage {
  constructor() {
    this._disabled = false;
  }
  static bind(fn) {
    var snap = snapshot();
    return function () {
      return runInSnapshot(snap, fn, this, arguments);
    };
  }
  static snapshot() {
    var snap = snapshot();
    return function (fn) {
      return runInSnapshot(snap, fn, this, Array.prototype.slice.call(arguments, 1));
    };
  }
  run(store, fn) {
    this._disabled = false;
    return runWith(this, store, fn, undefined, Array.prototype.slice.call(arguments, 2));
  }
  exit(fn) {
    return runWith(this, EXITED, fn, undefined, Array.prototype.slice.call(arguments, 1));
  }
  enterWith(store) {
    this._disabled = false;
    current.set({ key: this, value: store, up: current.get() });
  }
  getStore() {
    if (this._disabled) return undefined;
    var v = lookup(this, NOT_FOUND);
    return v === NOT_FOUND || v === EXITED ? undefined : v;
  }
  disable() {
    this._disabled = true;
  }
}

class AsyncResource {
  constructor(type) {
    this.type = type;
    this._snapshot = snapshot();
  }
  static bind(fn, type, thisArg) {
    return new AsyncResource(type || 'bound-anonymous-fn').bind(fn, thisArg);
  }
  runInAsyncScope(fn, thisArg) {
    return runInSnapshot(this._snapshot, fn, thisArg, Array.prototype.slice.call(arguments, 2));
  }
  bind(fn, thisArg) {
    var self = this;
    return function () {
      return self.runInAsyncScope.apply(
        self,
        [fn, thisArg === undefined ? this : thisArg].concat(Array.prototype.slice.call(arguments)),
      );
    };
  }
  emitDestroy() {
    return this;
  }
  asyncId() {
    return 0;
  }
  triggerAsyncId() {
    return 0;
  }
}

hide(G, Symbol.for('platform.async_hooks'), {
  AsyncLocalStorage: AsyncLocalStorage,
  AsyncResource: AsyncResource,
  tracksAwait: engineTracksAsyncContext,
});
