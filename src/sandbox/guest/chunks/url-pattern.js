// URLPattern from urlpattern-polyfill (the WHATWG algorithm; no hand-written pattern engine).
import { URLPattern } from 'urlpattern-polyfill/urlpattern';

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('URLPattern', URLPattern);
}
