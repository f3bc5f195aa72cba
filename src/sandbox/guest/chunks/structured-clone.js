// structuredClone with the HTML algorithm from core-js's implementation: -0, Blob and File,
// errors, the `transfer` option (an ArrayBuffer is detached), resizable buffers, DataCloneError.
// The pure build keeps its hands off globals; it finds no native structuredClone (this chunk is
// the one that defines it).
// the module alone, not its entry point: the entry also loads pure Map, Set and DOMException
// polyfills this engine needs none of (4 ms more on each instance's first clone)
import 'core-js-pure/modules/web.structured-clone.js';
import path from 'core-js-pure/internals/path.js';

const structuredCloneImpl = path.structuredClone;

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('structuredClone', function structuredClone(value, options) {
    return arguments.length > 1 ? structuredCloneImpl(value, options) : structuredCloneImpl(value);
  });
}
