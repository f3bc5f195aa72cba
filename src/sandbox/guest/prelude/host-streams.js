import { bytesOf, utf8 } from './lazy.js';

// ---- streams the host reads from the guest (fetch is in guest/chunks/fetch.js) ---------------
// Streams the host reads from the guest, one chunk per pull: `{done}` or `{done: false, value: ArrayBuffer}`.
var chunkBytes = function (v) {
  if (typeof v === 'string') return utf8(v);
  var b = bytesOf(v);
  if (!b) throw new TypeError('a body stream must yield Uint8Array chunks (or strings)');
  return b;
};

export var pullFrom = function (readers, id) {
  var reader = readers.get(id);
  if (!reader) return Promise.resolve({ done: true });
  return reader.read().then(function (r) {
    if (r.done) {
      readers.delete(id);
      return { done: true };
    }
    var b = chunkBytes(r.value);
    return { done: false, value: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) };
  });
};
