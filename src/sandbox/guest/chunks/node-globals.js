// Node's globals that code written for Node (or Workers' nodejs_compat) uses without an import:
// Buffer (unenv's, the same class node:buffer gives), setImmediate and clearImmediate. Loaded on
// first use.
import { Buffer } from 'unenv/node/buffer';

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('Buffer', Buffer);
  const immediates = new Map();
  let next = 1;
  platform.define('setImmediate', function setImmediate(fn, ...args) {
    const id = next++;
    immediates.set(
      id,
      setTimeout(() => {
        immediates.delete(id);
        fn(...args);
      }, 0),
    );
    return id;
  });
  platform.define('clearImmediate', function clearImmediate(id) {
    clearTimeout(immediates.get(id));
    immediates.delete(id);
  });
}
