// TextEncoder and TextDecoder (UTF-8 only, as in workerd): the host's UTF-8 through the prelude's helpers.
// A part of the prelude loaded on first use, so an instance that never touches them does not compile them.

/** @param {{ define: (name: string, value: unknown) => void, internals: any }} platform */
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
      const b = utf8(s);
      const n = Math.min(b.length, dest.length);
      dest.set(b.subarray(0, n));
      return { read: String(s).length, written: n };
    }
  }
  class TextDecoder {
    constructor(label, options) {
      const l = String(label === undefined ? 'utf-8' : label).toLowerCase();
      if (l !== 'utf-8' && l !== 'utf8')
        throw new RangeError('TextDecoder: only utf-8 is supported');
      this.fatal = !!options?.fatal;
      this.ignoreBOM = !!options?.ignoreBOM;
    }
    get encoding() {
      return 'utf-8';
    }
    decode(input) {
      if (input === undefined) return '';
      const b = bytesOf(input);
      if (!b) throw new TypeError('TextDecoder.decode: expected an ArrayBuffer or a view');
      if (!this.fatal) return utf8Decode(b.buffer, false, this.ignoreBOM);
      try {
        return utf8Decode(b.buffer, true, this.ignoreBOM);
      } catch (e) {
        throw new TypeError(e.message); // as the standard has it (the host's error is an Error)
      }
    }
  }
  platform.define('TextEncoder', TextEncoder);
  platform.define('TextDecoder', TextDecoder);
}
