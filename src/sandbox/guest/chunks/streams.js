// Streams: the WHATWG streams from web-streams-polyfill (readable with BYOB readers, writable,
// transform, queuing strategies); TextEncoderStream and TextDecoderStream on top of them; and
// CompressionStream/DecompressionStream (gzip, deflate, deflate-raw) with fflate's streaming codecs.
import {
  ByteLengthQueuingStrategy,
  CountQueuingStrategy,
  ReadableByteStreamController,
  ReadableStream,
  ReadableStreamBYOBReader,
  ReadableStreamBYOBRequest,
  ReadableStreamDefaultController,
  ReadableStreamDefaultReader,
  TransformStream,
  TransformStreamDefaultController,
  WritableStream,
  WritableStreamDefaultController,
  WritableStreamDefaultWriter,
} from 'web-streams-polyfill';
import { Deflate, Gunzip, Gzip, Inflate, Unzlib, Zlib } from 'fflate';

class TextEncoderStream {
  constructor() {
    const encoder = new TextEncoder();
    // a high surrogate ending one chunk waits for the low one that may start the next, as the
    // Encoding standard's stream encoder does; an empty result is no chunk
    let pending = '';
    const t = new TransformStream({
      transform: (chunk, c) => {
        let text = pending + String(chunk);
        pending = '';
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          pending = text.slice(-1);
          text = text.slice(0, -1);
        }
        const b = encoder.encode(text);
        if (b.length) c.enqueue(b);
      },
      flush: (c) => {
        if (pending) c.enqueue(encoder.encode(pending));
      },
    });
    this.readable = t.readable;
    this.writable = t.writable;
  }
  get encoding() {
    return 'utf-8';
  }
}

class TextDecoderStream {
  constructor(label = 'utf-8', options = {}) {
    // the decoder keeps a sequence split between chunks, and strips a BOM only at the start
    const decoder = new TextDecoder(label, options);
    const t = new TransformStream({
      transform: (chunk, c) => {
        const view =
          chunk instanceof ArrayBuffer
            ? new Uint8Array(chunk)
            : ArrayBuffer.isView(chunk)
              ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
              : null;
        if (!view)
          throw new TypeError('TextDecoderStream: chunks must be ArrayBuffers or typed arrays');
        const text = decoder.decode(view, { stream: true });
        if (text) c.enqueue(text);
      },
      flush: (c) => {
        const text = decoder.decode();
        if (text) c.enqueue(text);
      },
    });
    this.encoding = decoder.encoding;
    this.fatal = decoder.fatal;
    this.ignoreBOM = decoder.ignoreBOM;
    this.readable = t.readable;
    this.writable = t.writable;
  }
}

const CODECS = { gzip: [Gzip, Gunzip], deflate: [Zlib, Unzlib], 'deflate-raw': [Deflate, Inflate] };

// fflate's streaming decoders take a zlib or gzip trailer off without checking it: the checks are
// made here over what came out, so corrupt, truncated or trailing input fails as the standard says
let crcTable;
function crc32(crc, data) {
  if (!crcTable) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  let c = ~crc;
  for (let i = 0; i < data.length; i++) c = crcTable[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
function adler32(adler, data) {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  for (let i = 0; i < data.length; ) {
    // 5552 bytes at most between reductions keeps the sums exact in 32 bits
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}
const TRAILER = { gzip: 8, deflate: 4, 'deflate-raw': 0 };

function codecStream(format, index, name) {
  const pair = CODECS[format];
  if (!pair)
    throw new TypeError(`${name}: unsupported format "${format}" (gzip, deflate or deflate-raw)`);
  const decoding = index === 1;
  const trailer = decoding ? TRAILER[format] : 0;
  let tail = new Uint8Array(0);
  let check = format === 'gzip' ? 0 : 1;
  let size = 0;
  let controller;
  const codec = new pair[index]((data) => {
    if (trailer) {
      check = format === 'gzip' ? crc32(check, data) : adler32(check, data);
      size += data.length;
    }
    if (data.length) controller.enqueue(data);
  });
  // the codec's own errors (bad header, bad block) are the standard's TypeError
  const push = (bytes, final) => {
    try {
      codec.push(bytes, final);
    } catch (e) {
      throw new TypeError(`${name}: ${e?.message ?? 'the data is corrupt'}`);
    }
  };
  return new TransformStream({
    start: (c) => {
      controller = c;
    },
    transform: (chunk) => {
      const view =
        chunk instanceof ArrayBuffer
          ? new Uint8Array(chunk)
          : ArrayBuffer.isView(chunk)
            ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
            : null;
      if (!view) throw new TypeError(`${name}: chunks must be ArrayBuffers or typed arrays`);
      if (trailer) {
        const both = new Uint8Array(tail.length + view.length);
        both.set(tail);
        both.set(view, tail.length);
        tail = both.slice(Math.max(0, both.length - trailer));
      }
      push(view.slice(), false);
    },
    flush: () => {
      push(new Uint8Array(0), true);
      if (!trailer) return;
      const at = (i, little) =>
        little
          ? (tail[i] | (tail[i + 1] << 8) | (tail[i + 2] << 16) | (tail[i + 3] << 24)) >>> 0
          : ((tail[i] << 24) | (tail[i + 1] << 16) | (tail[i + 2] << 8) | tail[i + 3]) >>> 0;
      const ok =
        tail.length === trailer &&
        (format === 'gzip'
          ? at(0, true) === check && at(4, true) === size >>> 0
          : at(0, false) === check);
      if (!ok)
        throw new TypeError(
          `${name}: the ${format} data is corrupt, truncated or followed by other bytes (its check does not match)`,
        );
    },
  });
}
class CompressionStream {
  constructor(format) {
    const t = codecStream(format, 0, 'CompressionStream');
    this.readable = t.readable;
    this.writable = t.writable;
  }
}
class DecompressionStream {
  constructor(format) {
    const t = codecStream(format, 1, 'DecompressionStream');
    this.readable = t.readable;
    this.writable = t.writable;
  }
}

export default function install(platform) {
  const all = {
    ByteLengthQueuingStrategy,
    CountQueuingStrategy,
    ReadableByteStreamController,
    ReadableStream,
    ReadableStreamBYOBReader,
    ReadableStreamBYOBRequest,
    ReadableStreamDefaultController,
    ReadableStreamDefaultReader,
    TransformStream,
    TransformStreamDefaultController,
    WritableStream,
    WritableStreamDefaultController,
    WritableStreamDefaultWriter,
    TextEncoderStream,
    TextDecoderStream,
    CompressionStream,
    DecompressionStream,
  };
  for (const [name, value] of Object.entries(all)) platform.define(name, value);
  // A body's own stream (`response.body` of a text or bytes body) remembers that body until it is
  // read: a Response or Request made of the untouched stream (Hono re-wraps every response whose
  // headers a middleware sets after `await next()`) takes the text or bytes instead of streaming them.
  const backings = new WeakMap();
  // for bodies: a stream of these bytes (or of what a function makes when the stream is read),
  // and all of a stream's bytes
  platform.provide('streamOf', (bytes, backing) => {
    const stream = new ReadableStream({
      type: 'bytes',
      // a byte stream's high-water mark is 0: pull runs at the first read, not before
      pull(c) {
        backings.delete(stream);
        const b = typeof bytes === 'function' ? bytes() : bytes;
        if (b?.length) c.enqueue(b.slice());
        c.close();
      },
    });
    if (backing) backings.set(stream, backing);
    return stream;
  });
  /** The `{ text }` or `{ bytes }` behind a body's unread stream, which is locked as reading it would; else undefined. */
  platform.provide('takeBacking', (stream) => {
    const b = backings.get(stream);
    if (!b || stream.locked) return undefined;
    backings.delete(stream);
    stream.getReader();
    return b;
  });
  platform.provide('isStream', (v) => v instanceof ReadableStream);
  // web-streams-polyfill keeps the standard's [[disturbed]] as `_disturbed` (its version is pinned)
  platform.provide('isDisturbed', (stream) => stream._disturbed === true);
  // a body's clone (Response/Request.clone()): the second branch gets structured clones of the
  // chunks, as the fetch standard tees a body, so changing a chunk read from one never changes the other
  platform.provide('teeBody', (stream) => {
    const [first, second] = stream.tee();
    const cloned = new TransformStream({
      transform: (chunk, c) => c.enqueue(structuredClone(chunk)),
    });
    return [first, second.pipeThrough(cloned)];
  });
  // a body read whole (text(), json()...) takes Uint8Array chunks only, as the fetch standard says;
  // `lenient` (an answer the host reads) also takes strings and other buffers, as a streamed answer does
  platform.provide('readAll', async (stream, max, lenient = false) => {
    const reader = stream.getReader();
    const chunks = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const b = !lenient
        ? value instanceof Uint8Array
          ? value
          : null
        : typeof value === 'string'
          ? new TextEncoder().encode(value)
          : value instanceof ArrayBuffer
            ? new Uint8Array(value)
            : ArrayBuffer.isView(value)
              ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
              : null;
      if (!b) throw new TypeError('a body stream must yield bytes (Uint8Array)');
      size += b.length;
      if (size > max) {
        reader.cancel();
        throw new TypeError(`a body stream is larger than ${max} bytes`);
      }
      chunks.push(b);
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  });
}
