// Standard built-ins the engine may lack (the platform's own build, from Debian's 2025-04-26 QuickJS
// source, predates them; the stock variant has them natively, so there this chunk never loads):
// core-js's implementations, installed only where the engine has none, and Float16Array from
// @petamoriken/float16. Loaded on first touch of one of them (prelude/es-builtins.js).
import 'core-js/modules/es.iterator.constructor.js';
import 'core-js/modules/es.iterator.from.js';
import 'core-js/modules/es.iterator.concat.js';
import 'core-js/modules/es.iterator.drop.js';
import 'core-js/modules/es.iterator.every.js';
import 'core-js/modules/es.iterator.filter.js';
import 'core-js/modules/es.iterator.find.js';
import 'core-js/modules/es.iterator.flat-map.js';
import 'core-js/modules/es.iterator.for-each.js';
import 'core-js/modules/es.iterator.map.js';
import 'core-js/modules/es.iterator.reduce.js';
import 'core-js/modules/es.iterator.some.js';
import 'core-js/modules/es.iterator.take.js';
import 'core-js/modules/es.iterator.to-array.js';
import 'core-js/modules/es.set.union.v2.js';
import 'core-js/modules/es.set.intersection.v2.js';
import 'core-js/modules/es.set.difference.v2.js';
import 'core-js/modules/es.set.symmetric-difference.v2.js';
import 'core-js/modules/es.set.is-subset-of.v2.js';
import 'core-js/modules/es.set.is-superset-of.v2.js';
import 'core-js/modules/es.set.is-disjoint-from.v2.js';
import 'core-js/modules/es.map.get-or-insert.js';
import 'core-js/modules/es.map.get-or-insert-computed.js';
import 'core-js/modules/es.weak-map.get-or-insert.js';
import 'core-js/modules/es.weak-map.get-or-insert-computed.js';
import 'core-js/modules/es.promise.try.js';
import 'core-js/modules/es.error.is-error.js';
import 'core-js/modules/es.regexp.escape.js';
import 'core-js/modules/es.math.sum-precise.js';
import 'core-js/modules/es.math.f16round.js';
import 'core-js/modules/es.data-view.get-float16.js';
import 'core-js/modules/es.data-view.set-float16.js';
import { Float16Array } from '@petamoriken/float16';

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  if (typeof globalThis.Float16Array !== 'function') platform.define('Float16Array', Float16Array);
}
