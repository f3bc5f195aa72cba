// Every WHATWG encoding but UTF-8 for TextDecoder (UTF-16LE/BE, the single-byte encodings, the legacy
// multi-byte ones, `replacement`) from @exodus/bytes, which passes WPT's encoding tests. Loaded only
// when a TextDecoder is made for one of them; UTF-8 stays the host's (the text chunk).
import { TextDecoder } from '@exodus/bytes/encoding.js';

/** @param {{ internals: any }} platform */
export default function install(platform) {
  // the library's own decoder, as the text chunk's TextDecoder delegates to it (it throws the
  // standard's RangeError for a label no encoding has)
  platform.internals.otherDecoder = (label, options) => new TextDecoder(label, options);
}
