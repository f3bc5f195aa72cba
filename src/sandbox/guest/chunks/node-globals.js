// Node's globals that code written for Node (or Workers' nodejs_compat) uses without an import:
// Buffer (unenv's, the same class node:buffer gives), setImmediate and clearImmediate. Loaded on
// first use.
import { Buffer } from 'unenv/node/buffer';

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('Buffer', Buffer);
  const immediates = new Map();
  let next = 1;
  // Node's and workerd's Immediate: code holds it, and calls `unref()` on it (Next.js does); it
  // keeps nothing alive here, where an instance ends with its call
  class Immediate {
    #id;
    constructor(id) {
      this.#id = id;
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    [Symbol.toPrimitive]() {
      return this.#id;
    }
  }
  platform.define('setImmediate', function setImmediate(fn, ...args) {
    const id = next++;
    immediates.set(
      id,
      setTimeout(() => {
        immediates.delete(id);
        fn(...args);
      }, 0),
    );
    return new Immediate(id);
  });
  function clearImmediate(immediate) {
    const id = Number(immediate);
    clearTimeout(immediates.get(id));
    immediates.delete(id);
  }
  platform.define('clearImmediate', clearImmediate);
}
