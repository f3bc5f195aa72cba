// @ts-check
/**
 * What every part of the prelude shares: the global object, `hide`, the host table (taken off the
 * global scope at the end, index.js), and `wire` for strings crossing to the host.
 */

/** @type {import('../../host-api.ts').HostApi} */
export var host = globalThis.__host;

export var G = globalThis;

export var defineProperty = Object.defineProperty;

export var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;

export var hide = function (obj, name, value) {
  defineProperty(obj, name, {
    value: value,
    writable: true,
    configurable: true,
    enumerable: false,
  });
};

// Strings enter the host as C strings, which end at a NUL and carry a lone surrogate as three
// bytes: one holding either crosses as JSON behind U+0002 (the host's `text()` reads it back).
export var wire = function (s) {
  return /[\u0000\uD800-\uDFFF]/.test(s) || s.charCodeAt(0) === 2
    ? '\u0002' + JSON.stringify(s)
    : s;
};
