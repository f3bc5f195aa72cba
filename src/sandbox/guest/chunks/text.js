// TextEncoder and TextDecoder: UTF-8 is the host's, through the prelude's helpers, whole or streamed
// (`{ stream: true }` keeps a sequence split between calls); every other encoding is the encodings chunk's.
// A part of the prelude loaded on first use, so an instance that never touches them does not compile them.

/** How many bytes at the end of `b` begin a UTF-8 sequence that is not complete yet. */
function incompleteTail(b) {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const c = b[b.length - back];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** @param {{ define: (name: string, value: unknown) => void, load: (chunk: string) => void, internals: any }} platform */
export default function install(platform) {
  const { utf8, utf8Decode, bytesOf } = platform.internals;
  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(s) {
      return utf8(s === undefined ? '' : s);
    }
    encodeInto(s, dest) {
      if (!(dest instanceof Uint8Array))
        throw new TypeError('TextEncoder.encodeInto: the destination must be a Uint8Array');
      const str = String(s);
      const b = utf8(str);
      if (b.length <= dest.length) {
        dest.set(b);
        return { read: str.length, written: b.length };
      }
      // as much as fits, ending between characters; `read` counts the UTF-16 code units of what
      // was written, so a caller (React's streaming renderer) writes the rest into its next buffer
      let n = dest.length;
      while (n > 0 && (b[n] & 0xc0) === 0x80) n--;
      dest.set(b.subarray(0, n));
      let read = 0;
      for (let i = 0; i < n; i++) {
        const c = b[i];
        if ((c & 0xc0) !== 0x80) read += c >= 0xf0 ? 2 : 1;
      }
      return { read, written: n };
    }
  }
  /** The labels of UTF-8 (the Encoding standard's table); any other loads the encodings chunk. */
  const UTF8_LABELS = [
    'unicode-1-1-utf-8',
    'unicode11utf8',
    'unicode20utf8',
    'utf-8',
    'utf8',
    'x-unicode20utf8',
  ];
  const exact = (b) =>
    b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer;
  class TextDecoder {
    #other;
    #fatal;
    #ignoreBOM;
    /** bytes of a sequence the last `stream: true` call ended inside */
    #pending = null;
    /** whether this stream's first bytes were decoded (a BOM is stripped only there) */
    #started = false;
    constructor(label, options) {
      const l = String(label === undefined ? 'utf-8' : label)
        .replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '')
        .toLowerCase();
      this.#fatal = !!options?.fatal;
      this.#ignoreBOM = !!options?.ignoreBOM;
      if (!UTF8_LABELS.includes(l)) {
        platform.load('encodings');
        this.#other = platform.internals.otherDecoder(label, options);
      }
    }
    get encoding() {
      return this.#other ? this.#other.encoding : 'utf-8';
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input, options) {
      if (this.#other) return this.#other.decode(input, options);
      const stream = !!options?.stream;
      let b = input === undefined ? new Uint8Array(0) : bytesOf(input);
      if (!b) throw new TypeError('TextDecoder.decode: expected an ArrayBuffer or a view');
      if (this.#pending) {
        const all = new Uint8Array(this.#pending.length + b.length);
        all.set(this.#pending);
        all.set(b, this.#pending.length);
        b = all;
        this.#pending = null;
      }
      if (stream) {
        const keep = incompleteTail(b);
        if (keep) {
          this.#pending = b.slice(b.length - keep);
          b = b.subarray(0, b.length - keep);
        }
      }
      const ignoreBOM = this.#ignoreBOM || this.#started;
      if (b.length) this.#started = true;
      // the end of a stream: the next call begins another
      if (!stream) this.#started = false;
      if (!b.length) return '';
      try {
        return utf8Decode(exact(b), this.#fatal, ignoreBOM);
      } catch (e) {
        this.#pending = null;
        this.#started = false;
        throw new TypeError(e.message); // as the standard has it (the host's error is an Error)
      }
    }
  }
  platform.define('TextEncoder', TextEncoder);
  platform.define('TextDecoder', TextDecoder);
}
