// @ts-check
/**
 * Standard built-ins newer than the engine (the platform's own build is QuickJS 2025-04-26): each
 * one the engine lacks becomes a lazy property that loads the `es-builtins` chunk (core-js and
 * @petamoriken/float16) on first touch, so an instance that never uses them pays nothing. On an
 * engine that has them natively nothing here applies. Resizable ArrayBuffers, the RegExp `v` flag,
 * modifiers and duplicate named groups are syntax or engine state no library can add
 * (docs/decisions/engine.md).
 */
import { G } from './head.js';
import { lazyOn } from './lazy.js';

/** @param {any} target @param {string[]} names */
var missing = function (target, names) {
  var absent = names.filter(function (n) {
    return !(n in target);
  });
  if (absent.length) lazyOn(target, 'es-builtins', absent);
};

var IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([].values()));

missing(G, ['Iterator', 'Float16Array']);
missing(IteratorPrototype, [
  'map',
  'filter',
  'take',
  'drop',
  'flatMap',
  'reduce',
  'toArray',
  'forEach',
  'some',
  'every',
  'find',
]);
missing(Set.prototype, [
  'union',
  'intersection',
  'difference',
  'symmetricDifference',
  'isSubsetOf',
  'isSupersetOf',
  'isDisjointFrom',
]);
missing(Map.prototype, ['getOrInsert', 'getOrInsertComputed']);
missing(WeakMap.prototype, ['getOrInsert', 'getOrInsertComputed']);
missing(Promise, ['try']);
missing(Error, ['isError']);
missing(RegExp, ['escape']);
missing(Math, ['sumPrecise', 'f16round']);
missing(DataView.prototype, ['getFloat16', 'setFloat16']);

// QuickJS 2025-04-26's own non-standard helpers, which no other runtime has
// @ts-expect-error
delete Object.__getClass;
// @ts-expect-error
delete String.prototype.__quote;
